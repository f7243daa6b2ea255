-- The audit link back on its indexes (issue 33, parked events). A PL/pgSQL function's text
-- parameters take the collation of the call's arguments, and the chain's trigger
-- (audit_chain_append) passes TG_TABLE_NAME, a `name`, whose collation is "C". Every entry a
-- trigger chained therefore compared workflow_id and tenant_id under "C", which the
-- default-collation indexes (audit_chain_workflow_id_n_key, audit_chain_heads_pkey) cannot
-- serve: the event's last entry was found by reading the whole audit_chain table, so each
-- audited write cost more with every entry ever written (350 shared blocks per entry beside
-- 2,000 parked events against 3 for the index). Equality is byte equality under any
-- deterministic collation, so the rows found, and the entries and heads written, are the ones
-- 0132's version found and wrote.
--
-- Same signature, same statements and lock order as 0132; only the two comparison values
-- are given the database's default collation, whatever the caller passed.
CREATE OR REPLACE FUNCTION audit_chain_link(p_source text, p_workflow text, p_tenant text,
                                            p_key text, p_op text, p_json text) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    d bytea := sha256(convert_to(p_source || ':' || p_json, 'UTF8'));
    s smallint := audit_chain_shard(p_workflow);
    -- Declared with the default collation: the indexes' own, so the comparisons use them.
    wf text COLLATE "default" := p_workflow;
    tn text COLLATE "default" := p_tenant;
BEGIN
    -- The (tenant, shard) head row is the lock: an event's entries all take the same one, so
    -- they append in commit order and never fork (ADR 0018; as in 0132).
    PERFORM 1 FROM audit_chain_heads WHERE tenant_id = tn AND shard = s FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (tenant_id, shard, entries) VALUES (tn, s, 0)
            ON CONFLICT (tenant_id, shard) DO NOTHING;
        PERFORM 1 FROM audit_chain_heads WHERE tenant_id = tn AND shard = s FOR UPDATE;
    END IF;
    -- Read the event's last entry, append after it and move the shard's head, in one statement.
    WITH last AS (
        SELECT c.hash, c.n FROM audit_chain c
        WHERE c.workflow_id = wf ORDER BY c.n DESC LIMIT 1
    ), entry AS (
        INSERT INTO audit_chain (tenant_id, shard, workflow_id, n, source, row_key, op,
                                 row_digest, prev_hash, hash)
        SELECT tn, s, wf, coalesce(l.n, 0) + 1, p_source, p_key, p_op, d, l.hash,
               sha256(coalesce(l.hash, ''::bytea) || d)
        FROM (SELECT 1) AS one LEFT JOIN last l ON true
        RETURNING hash
    )
    UPDATE audit_chain_heads h SET entries = h.entries + 1, head_hash = entry.hash,
                                   updated_at = now()
        FROM entry WHERE h.tenant_id = tn AND h.shard = s;
END $$;

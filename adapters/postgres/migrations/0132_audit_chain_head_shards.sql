-- The audit chain's head sharded per (tenant, shard) (issue 33; ADR 0018, consequences of
-- 2026-12-02). Every audited write of a tenant locked the tenant's one head row until its
-- commit, so a busy tenant's writes queued on it. Now each event (chain id) belongs to one of
-- eight shards and locks only its shard's head: events of one tenant in different shards no
-- longer wait for each other, and the entries of one event (one shard, one lock) still append
-- in commit order and never fork. Deleting an event's whole chain still shows, at its shard's
-- head.

-- No writer may chain an entry while the rows and heads are being rebuilt.
LOCK TABLE audit_chain_heads, audit_chain IN EXCLUSIVE MODE;

-- The shard of a chain id: the first byte of its SHA-256, mod 8. Stable across PostgreSQL
-- versions and computable outside it (hashtext is neither promised).
CREATE FUNCTION audit_chain_shard(p_workflow text) RETURNS smallint
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$ SELECT (get_byte(sha256(convert_to(p_workflow, 'UTF8')), 0) % 8)::smallint $$;

ALTER TABLE audit_chain ADD COLUMN shard smallint;
UPDATE audit_chain SET shard = audit_chain_shard(workflow_id);
ALTER TABLE audit_chain ALTER COLUMN shard SET NOT NULL;
-- The verifier's per-shard count and newest hash (ORDER BY id DESC LIMIT 1) read this index.
CREATE INDEX audit_chain_tenant_shard ON audit_chain (tenant_id, shard, id);

-- Where a tenant's head disagreed with its rows before this migration (whole chains deleted or
-- added), the disagreement must survive the rebuild below, or the migration would erase the
-- evidence: kept here, carried into the new heads after.
CREATE TEMP TABLE audit_heads_before ON COMMIT DROP AS
SELECT h.tenant_id,
       h.entries - (SELECT count(*) FROM audit_chain c WHERE c.tenant_id = h.tenant_id) AS missing,
       h.head_hash IS DISTINCT FROM (SELECT c.hash FROM audit_chain c
                                     WHERE c.tenant_id = h.tenant_id
                                     ORDER BY c.id DESC LIMIT 1) AS moved,
       h.head_hash
FROM audit_chain_heads h;

-- The heads, rebuilt per (tenant, shard) from the chain rows, so a database migrated with data
-- that verified clean still does.
ALTER TABLE audit_chain_heads DROP CONSTRAINT audit_chain_heads_pkey;
DELETE FROM audit_chain_heads;
ALTER TABLE audit_chain_heads ADD COLUMN shard smallint NOT NULL;
ALTER TABLE audit_chain_heads ADD PRIMARY KEY (tenant_id, shard);
INSERT INTO audit_chain_heads (tenant_id, shard, entries, head_hash)
SELECT c.tenant_id, c.shard, count(*),
       (array_agg(c.hash ORDER BY c.id DESC))[1]
FROM audit_chain c GROUP BY c.tenant_id, c.shard;

-- A count that disagreed goes on disagreeing by as much, at the tenant's shard-0 head; a newest
-- hash that disagreed stays on the head of the shard that holds the tenant's newest row.
INSERT INTO audit_chain_heads (tenant_id, shard, entries, head_hash)
SELECT b.tenant_id, 0, b.missing, NULL FROM audit_heads_before b WHERE b.missing <> 0
ON CONFLICT (tenant_id, shard)
    DO UPDATE SET entries = audit_chain_heads.entries + excluded.entries;
UPDATE audit_chain_heads h SET head_hash = b.head_hash
FROM audit_heads_before b
WHERE b.moved AND b.missing = 0 AND h.tenant_id = b.tenant_id
  AND h.shard = (SELECT c.shard FROM audit_chain c WHERE c.tenant_id = b.tenant_id
                 ORDER BY c.id DESC LIMIT 1);

-- Same signature and 0131's two-statement shape; the lock is the (tenant, shard) head row.
CREATE OR REPLACE FUNCTION audit_chain_link(p_source text, p_workflow text, p_tenant text,
                                            p_key text, p_op text, p_json text) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    d bytea := sha256(convert_to(p_source || ':' || p_json, 'UTF8'));
    s smallint := audit_chain_shard(p_workflow);
BEGIN
    -- The (tenant, shard) head row is the lock: an event's entries all take the same one, so
    -- they append in commit order and never fork. One lock per entry; every writer in the
    -- application writes one event per transaction, so a transaction holds one shard's lock
    -- (ADR 0018). Only a shard's first entry needs the INSERT; a concurrent first insert makes
    -- ours wait for it and do nothing, and the second FOR UPDATE then waits.
    PERFORM 1 FROM audit_chain_heads WHERE tenant_id = p_tenant AND shard = s FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (tenant_id, shard, entries) VALUES (p_tenant, s, 0)
            ON CONFLICT (tenant_id, shard) DO NOTHING;
        PERFORM 1 FROM audit_chain_heads WHERE tenant_id = p_tenant AND shard = s FOR UPDATE;
    END IF;
    -- Read the event's last entry, append after it and move the shard's head, in one statement.
    WITH last AS (
        SELECT c.hash, c.n FROM audit_chain c
        WHERE c.workflow_id = p_workflow ORDER BY c.n DESC LIMIT 1
    ), entry AS (
        INSERT INTO audit_chain (tenant_id, shard, workflow_id, n, source, row_key, op,
                                 row_digest, prev_hash, hash)
        SELECT p_tenant, s, p_workflow, coalesce(l.n, 0) + 1, p_source, p_key, p_op, d, l.hash,
               sha256(coalesce(l.hash, ''::bytea) || d)
        FROM (SELECT 1) AS one LEFT JOIN last l ON true
        RETURNING hash
    )
    UPDATE audit_chain_heads h SET entries = h.entries + 1, head_hash = entry.hash,
                                   updated_at = now()
        FROM entry WHERE h.tenant_id = p_tenant AND h.shard = s;
END $$;

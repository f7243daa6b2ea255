-- The audit link in two statements instead of five (issue 33; ADR 0018, consequences of
-- 2026-12-02). The rows it writes are the ones 0041's version wrote: the same chain entry, the
-- same head (entries + 1, head_hash, updated_at), and the same lock: the tenant's head row,
-- taken by the first statement, before the event's last entry is read by the second (a
-- statement of its own, so its snapshot sees every entry committed by the lock's previous
-- holder). The head row gets one new version per entry, as before.
CREATE OR REPLACE FUNCTION audit_chain_link(p_source text, p_workflow text, p_tenant text,
                                            p_key text, p_op text, p_json text) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    d bytea := sha256(convert_to(p_source || ':' || p_json, 'UTF8'));
BEGIN
    -- The tenant's head row is the lock: entries of one tenant (so of one event) append in
    -- commit order and never fork. Only a tenant's first entry needs the INSERT; a concurrent
    -- first insert makes ours wait for it and do nothing, and the second FOR UPDATE then waits.
    PERFORM 1 FROM audit_chain_heads WHERE tenant_id = p_tenant FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO audit_chain_heads (tenant_id, entries) VALUES (p_tenant, 0)
            ON CONFLICT (tenant_id) DO NOTHING;
        PERFORM 1 FROM audit_chain_heads WHERE tenant_id = p_tenant FOR UPDATE;
    END IF;
    -- Read the event's last entry, append after it and move the head, in one statement.
    WITH last AS (
        SELECT c.hash, c.n FROM audit_chain c
        WHERE c.workflow_id = p_workflow ORDER BY c.n DESC LIMIT 1
    ), entry AS (
        INSERT INTO audit_chain (tenant_id, workflow_id, n, source, row_key, op, row_digest,
                                 prev_hash, hash)
        SELECT p_tenant, p_workflow, coalesce(l.n, 0) + 1, p_source, p_key, p_op, d, l.hash,
               sha256(coalesce(l.hash, ''::bytea) || d)
        FROM (SELECT 1) AS one LEFT JOIN last l ON true
        RETURNING hash
    )
    UPDATE audit_chain_heads h SET entries = h.entries + 1, head_hash = entry.hash,
                                   updated_at = now()
        FROM entry WHERE h.tenant_id = p_tenant;
END $$;

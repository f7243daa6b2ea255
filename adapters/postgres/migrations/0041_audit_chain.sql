-- Tamper-evident audit (issue 11, item 7). Every row written to state_transitions,
-- review_decisions and receipts (each receipt version: receipts are settled by UPDATE) appends
-- one entry to its event's hash chain, so a row edited, deleted or written with the triggers
-- off no longer matches the chain. Triggers keep every writer honest without touching any
-- INSERT; `tollgate trace EVENT --verify` and `tollgate ops audit --verify` recompute.
-- ADR 0018.

-- The canonical text of a row: its JSON, always rendered in UTC. The SET clause makes the
-- session's TimeZone irrelevant, so the writer and a later verifier agree byte for byte.
CREATE FUNCTION audit_row_json(r anyelement) RETURNS text
    LANGUAGE sql STABLE SET timezone TO 'UTC'
    AS $$ SELECT row_to_json(r)::text $$;

CREATE TABLE audit_chain (
    id          bigserial   PRIMARY KEY,
    tenant_id   text        NOT NULL,
    workflow_id text        NOT NULL,
    n           int         NOT NULL,          -- 1, 2, ... within the event's chain
    source      text        NOT NULL,          -- the table the row lives in
    row_key     text        NOT NULL,          -- seq, decision_key or action_key
    op          text        NOT NULL,          -- INSERT or UPDATE
    row_digest  bytea       NOT NULL,          -- sha256(source || ':' || canonical row)
    prev_hash   bytea,                         -- NULL for the first entry of an event
    hash        bytea       NOT NULL,          -- sha256(prev_hash || row_digest)
    at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (workflow_id, n)
);
CREATE INDEX audit_chain_tenant ON audit_chain (tenant_id, id);

-- One head per tenant: how many entries its chains hold and the newest hash, so deleting an
-- event's whole chain (or its last entries) is detectable too.
CREATE TABLE audit_chain_heads (
    tenant_id  text        PRIMARY KEY,
    entries    bigint      NOT NULL,
    head_hash  bytea,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION audit_chain_link(p_source text, p_workflow text, p_tenant text, p_key text,
                                 p_op text, p_json text) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    d bytea := sha256(convert_to(p_source || ':' || p_json, 'UTF8'));
    prev bytea;
    last_n int;
    h bytea;
BEGIN
    -- The tenant's head row is the lock: entries of one tenant (so of one event) append in
    -- commit order and never fork. One lock for both keeps the order fixed (no deadlock).
    INSERT INTO audit_chain_heads (tenant_id, entries) VALUES (p_tenant, 0)
        ON CONFLICT (tenant_id) DO NOTHING;
    PERFORM 1 FROM audit_chain_heads WHERE tenant_id = p_tenant FOR UPDATE;
    SELECT c.hash, c.n INTO prev, last_n FROM audit_chain c
        WHERE c.workflow_id = p_workflow ORDER BY c.n DESC LIMIT 1;
    h := sha256(coalesce(prev, ''::bytea) || d);
    INSERT INTO audit_chain (tenant_id, workflow_id, n, source, row_key, op, row_digest,
                             prev_hash, hash)
        VALUES (p_tenant, p_workflow, coalesce(last_n, 0) + 1, p_source, p_key, p_op, d, prev, h);
    UPDATE audit_chain_heads SET entries = entries + 1, head_hash = h, updated_at = now()
        WHERE tenant_id = p_tenant;
END $$;

-- TG_ARGV[0] names the row's key column. state_transitions has no tenant column: the
-- events row has it, and the workflow id (event/TENANT/KEY) when that row is not there.
CREATE FUNCTION audit_chain_append() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    j jsonb := to_jsonb(NEW);
    tenant text := j ->> 'tenant_id';
BEGIN
    IF tenant IS NULL THEN
        SELECT e.tenant_id INTO tenant FROM events e WHERE e.workflow_id = NEW.workflow_id;
        tenant := coalesce(tenant, nullif(split_part(NEW.workflow_id, '/', 2), ''), '-');
    END IF;
    PERFORM audit_chain_link(TG_TABLE_NAME, NEW.workflow_id, tenant, j ->> TG_ARGV[0], TG_OP,
                             audit_row_json(NEW));
    RETURN NULL;
END $$;

CREATE TRIGGER state_transitions_audit_chain AFTER INSERT ON state_transitions
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append('seq');
CREATE TRIGGER review_decisions_audit_chain AFTER INSERT ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append('decision_key');
-- Receipts change by design (PENDING -> SUCCEEDED, attempts, fence): each version is an entry.
CREATE TRIGGER receipts_audit_chain AFTER INSERT OR UPDATE ON receipts
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append('action_key');

-- Rows written before this migration join their event's chain in the order they were written.
SELECT audit_chain_link(src, wf, tenant, k, 'INSERT', js) FROM (
    SELECT 'state_transitions' AS src, t.workflow_id AS wf,
           coalesce(e.tenant_id, nullif(split_part(t.workflow_id, '/', 2), ''), '-') AS tenant,
           t.seq::text AS k, audit_row_json(t) AS js, t.at AS at, 0 AS kind, t.id AS id
      FROM state_transitions t LEFT JOIN events e ON e.workflow_id = t.workflow_id
    UNION ALL
    SELECT 'review_decisions', d.workflow_id, d.tenant_id, d.decision_key, audit_row_json(d),
           d.at, 1, d.id FROM review_decisions d
    UNION ALL
    SELECT 'receipts', r.workflow_id, r.tenant_id, r.action_key, audit_row_json(r),
           r.updated_at, 2, 0 FROM receipts r
    ORDER BY at, kind, id
) AS backlog;

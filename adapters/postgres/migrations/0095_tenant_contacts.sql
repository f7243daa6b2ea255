-- A tenant's own contact points (issue 28 item 3, ADR 0039): the phone numbers, e-mail
-- addresses and web domains it publishes. The draft validator never counts them as foreign.
-- `key` is contracts.contacts.contact_key of the value (a phone's national digits, a lowered
-- address or host): one live row per tenant, kind and key, so "+84 28 3822 1234" and
-- "028 3822 1234" are one point.
--
-- Rows are never deleted: `tollgate ops contacts remove` marks one removed (who, when, why),
-- and re-adding makes a new row. Every insert and every removal is an entry in the tamper-evident
-- audit chain (0041, ADR 0018) under the chain id `contacts/<tenant>`, so `tollgate ops audit
-- --verify` names a point edited, deleted or written around the chain.

CREATE TABLE tenant_contacts (
    id             bigserial   PRIMARY KEY,
    tenant_id      text        NOT NULL,
    kind           text        NOT NULL CHECK (kind IN ('phone', 'email', 'domain')),
    value          text        NOT NULL,
    key            text        NOT NULL,
    added_by       text        NOT NULL,
    added_at       timestamptz NOT NULL DEFAULT now(),
    reason         text        NOT NULL,
    removed_by     text,
    removed_at     timestamptz,
    removed_reason text,
    -- The audit chain's id for this tenant's points (the chain is kept per workflow id).
    workflow_id    text        GENERATED ALWAYS AS ('contacts/' || tenant_id) STORED
);
CREATE UNIQUE INDEX tenant_contacts_live ON tenant_contacts (tenant_id, kind, key)
    WHERE removed_at IS NULL;

CREATE FUNCTION tenant_contacts_keep() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'tenant contact points are marked removed, never deleted';
    END IF;
    IF OLD.removed_at IS NOT NULL OR NEW.removed_at IS NULL
       OR (NEW.tenant_id, NEW.kind, NEW.value, NEW.key, NEW.added_by, NEW.added_at, NEW.reason)
          IS DISTINCT FROM
          (OLD.tenant_id, OLD.kind, OLD.value, OLD.key, OLD.added_by, OLD.added_at, OLD.reason)
    THEN
        RAISE EXCEPTION 'a tenant contact point changes only by being removed, once';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER tenant_contacts_keep BEFORE UPDATE OR DELETE ON tenant_contacts
    FOR EACH ROW EXECUTE FUNCTION tenant_contacts_keep();
CREATE TRIGGER tenant_contacts_audit_chain AFTER INSERT OR UPDATE ON tenant_contacts
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append('id');

-- Rollout modes (docs/rollout.md). A released policy file is never edited, so the mode a tenant
-- runs in lives here, where an audited operator command changes it. No row = 'assisted', the
-- behaviour from before modes existed. tenant_id / adapter may be '*' (any); the most specific
-- row wins (exact tenant before '*', then exact adapter before '*').
CREATE TABLE rollout_modes (
    tenant_id        text        NOT NULL,
    adapter          text        NOT NULL,
    mode             text        NOT NULL
                     CHECK (mode IN ('fixture', 'shadow', 'canary', 'assisted')),
    -- canary: sends still allowed; NULL outside canary. At 0 the rest stay in shadow until an
    -- operator confirms (moves the row on).
    canary_remaining int,
    -- canary: only action keys whose hash bucket (0-99) is below this send; NULL = every key.
    canary_percent   int         CHECK (canary_percent BETWEEN 1 AND 100),
    reason           text        NOT NULL,
    changed_by       text        NOT NULL,
    changed_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, adapter)
);

-- One row per `tollgate certify` run: the rollout check asks for a passing one that matches the
-- current policy version, code commit and fixture catalogue (the digest of its node ids, so a
-- run on a hand-picked subset certifies nothing).
CREATE TABLE certifications (
    id             bigserial   PRIMARY KEY,
    policy_version text        NOT NULL,
    code_commit    text        NOT NULL,
    catalogue      text        NOT NULL,
    passed         boolean     NOT NULL,
    tests_passed   int         NOT NULL,
    tests_failed   int         NOT NULL,
    pack_dir       text        NOT NULL,
    at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX certifications_lookup ON certifications (policy_version, code_commit, catalogue);

-- The mode is on every receipt and decision. Rows from before this migration keep NULL
-- (they ran as 'assisted').
ALTER TABLE receipts ADD COLUMN rollout_mode text;
ALTER TABLE review_decisions ADD COLUMN rollout_mode text;

-- WOULD_SEND: final, written in shadow (and for the held-back part of a canary) instead of a
-- send. Sweep, settle and begin_attempt only touch PENDING / UNKNOWN, so it is never sent later.
ALTER TABLE receipts DROP CONSTRAINT receipts_status_check;
ALTER TABLE receipts ADD CONSTRAINT receipts_status_check
    CHECK (status IN ('PENDING', 'SUCCEEDED', 'REJECTED', 'UNKNOWN', 'WOULD_SEND'));

-- The narrowest mode among the rows covering a tenant (adapter NULL = any of its adapters): a
-- review decision is stamped before the send step picks its adapter, and the narrowest is the
-- one that may still hold the send back.
CREATE FUNCTION rollout_mode_for(p_tenant text, p_adapter text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT COALESCE((
        SELECT mode FROM rollout_modes
         WHERE tenant_id IN (p_tenant, '*')
           AND (p_adapter IS NULL OR adapter IN (p_adapter, '*'))
         ORDER BY (tenant_id = '*'),
                  CASE WHEN p_adapter IS NULL THEN array_position(
                      ARRAY['fixture', 'shadow', 'canary', 'assisted'], mode) END,
                  (adapter = '*'),
                  array_position(ARRAY['fixture', 'shadow', 'canary', 'assisted'], mode)
         LIMIT 1), 'assisted')
$$;

-- Decisions are written from three places (accepted, refused, refused after close); a trigger
-- stamps all of them without each statement having to know about modes.
CREATE FUNCTION stamp_decision_mode() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.rollout_mode IS NULL THEN
        NEW.rollout_mode := rollout_mode_for(NEW.tenant_id, NULL);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER review_decisions_mode BEFORE INSERT ON review_decisions
    FOR EACH ROW EXECUTE FUNCTION stamp_decision_mode();

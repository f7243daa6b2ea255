-- HTTP intake (docs/api.md): one row per delivery key the service answered for, and the outbox
-- the relay drains into Temporal. Both are written in one transaction, so an accepted event is
-- never lost when Temporal is unreachable, and a repeated post finds its first answer here.
CREATE TABLE http_intake (
    workflow_id         text        PRIMARY KEY,
    tenant_id           text        NOT NULL,
    payload_fingerprint text,
    status              text        NOT NULL,   -- accepted | invalid
    reason_code         text,
    received_at         timestamptz NOT NULL DEFAULT now()
);

-- Sent rows stay (sent_at set) as the record of what reached Temporal and with what answer.
CREATE TABLE outbox (
    id           bigserial   PRIMARY KEY,
    workflow_id  text        NOT NULL,
    tenant_id    text        NOT NULL,
    raw          text        NOT NULL,
    received_at  timestamptz NOT NULL,
    attempts     int         NOT NULL DEFAULT 0,
    last_error   text,
    sent_at      timestamptz,
    ack_status   text
);
-- The relay's work list, oldest first.
CREATE INDEX outbox_unsent ON outbox (id) WHERE sent_at IS NULL;

-- Notices to reviewers (review opened, SLA passed, expired): one row per review, draft version
-- and step, written before the send (the receipt), so a notice goes out at most once.
CREATE TABLE review_notices (
    notice_key   text        PRIMARY KEY,  -- {workflow_id}#{draft_version}#{step}
    workflow_id  text        NOT NULL,
    tenant_id    text        NOT NULL,
    step         text        NOT NULL,     -- opened | sla | expired
    channel      text        NOT NULL,
    status       text        NOT NULL,     -- PENDING | SENT | FAILED (retried) | UNKNOWN (never resent)
    attempts     int         NOT NULL DEFAULT 0,
    last_error   text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    sent_at      timestamptz
);

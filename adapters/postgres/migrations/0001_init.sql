-- Tollgate schema v1. Idempotency lives in the unique constraints: a second run of any step
-- writes nothing new.

CREATE TABLE events (
    id                  bigserial PRIMARY KEY,
    workflow_id         text        NOT NULL UNIQUE,
    run_id              text        NOT NULL,
    tenant_id           text        NOT NULL,
    idempotency_key     text        NOT NULL,
    event_id            text        NOT NULL,
    event_type          text        NOT NULL,
    schema_version      int         NOT NULL,
    entity_id           text        NOT NULL,
    correlation_id      text        NOT NULL,
    payload_fingerprint text        NOT NULL,
    occurred_at         timestamptz NOT NULL,
    received_at         timestamptz NOT NULL,
    state               text        NOT NULL,
    last_seq            int         NOT NULL DEFAULT 0,
    reason_code         text,
    attempt             int         NOT NULL DEFAULT 1,
    policy_version      text,
    artifact_version    int,
    receipt_key         text,
    outcome             jsonb,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, idempotency_key)
);
CREATE INDEX events_tenant_state ON events (tenant_id, state);
CREATE INDEX events_entity ON events (tenant_id, entity_id, event_type, occurred_at);

-- Append only: one row per state change, keyed by the workflow's own step counter so that a
-- retried write is a no-op.
CREATE TABLE state_transitions (
    id             bigserial PRIMARY KEY,
    workflow_id    text        NOT NULL,
    seq            int         NOT NULL,
    from_state     text,
    to_state       text        NOT NULL,
    actor          text        NOT NULL,
    reason         text        NOT NULL,
    policy_version text,
    at             timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workflow_id, seq)
);

CREATE TABLE quarantine (
    id               bigserial PRIMARY KEY,
    workflow_id      text        NOT NULL UNIQUE,
    tenant_id        text,
    event_id         text,
    reason_code      text        NOT NULL,
    detail           text        NOT NULL,
    redacted_payload jsonb,
    received_at      timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE drafts (
    workflow_id    text        NOT NULL,
    version        int         NOT NULL,
    status         text        NOT NULL,
    draft          jsonb,
    provider       text        NOT NULL,
    model          text        NOT NULL,
    prompt_version text        NOT NULL,
    findings       jsonb       NOT NULL DEFAULT '[]',
    raw_excerpt    text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, version)
);

CREATE TABLE review_decisions (
    id             bigserial PRIMARY KEY,
    workflow_id    text        NOT NULL,
    -- '<workflow_id>#a<seq>' for an accepted decision, '#r<n>' for a refused one
    decision_key   text        NOT NULL UNIQUE,
    tenant_id      text        NOT NULL,
    request_id     text        NOT NULL,
    draft_version  int         NOT NULL,
    decision       text        NOT NULL,
    reviewer       text        NOT NULL,
    role           text        NOT NULL,
    reason         text        NOT NULL,
    accepted       boolean     NOT NULL,
    refusal_code   text,
    policy_version text,
    at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX review_decisions_workflow ON review_decisions (workflow_id);

CREATE TABLE receipts (
    action_key          text        PRIMARY KEY,
    tenant_id           text        NOT NULL,
    adapter             text        NOT NULL,
    action              text        NOT NULL,
    event_id            text        NOT NULL,
    workflow_id         text        NOT NULL,
    correlation_id      text        NOT NULL,
    request_fingerprint text        NOT NULL,
    status              text        NOT NULL CHECK (status IN ('PENDING', 'SUCCEEDED', 'REJECTED', 'UNKNOWN')),
    external_id         text,
    error_class         text,
    error_code          text,
    attempts            int         NOT NULL DEFAULT 0,
    fence               int         NOT NULL DEFAULT 0,
    policy_version      text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, adapter, action_key)
);
CREATE INDEX receipts_open ON receipts (status, updated_at) WHERE status IN ('PENDING', 'UNKNOWN');

CREATE TABLE dead_letters (
    id                   bigserial PRIMARY KEY,
    workflow_id          text        NOT NULL,
    tenant_id            text,
    event_id             text,
    correlation_id       text,
    error_class          text        NOT NULL,
    error_code           text        NOT NULL,
    state                text        NOT NULL,
    owner                text        NOT NULL,
    replay_plan          text        NOT NULL,
    redacted_payload     jsonb,
    status               text        NOT NULL DEFAULT 'OPEN'
                         CHECK (status IN ('OPEN', 'APPROVED', 'REPLAYED', 'CLOSED')),
    approved_by          text,
    replayed_workflow_id text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workflow_id, error_code)
);

-- '*' is the wildcard: (adapter, '*') closes an adapter for every tenant, ('*', tenant) a tenant.
CREATE TABLE kill_switches (
    adapter    text        NOT NULL,
    tenant_id  text        NOT NULL,
    closed     boolean     NOT NULL,
    reason     text        NOT NULL,
    changed_by text        NOT NULL,
    changed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (adapter, tenant_id)
);

CREATE TABLE audit (
    id     bigserial PRIMARY KEY,
    at     timestamptz NOT NULL DEFAULT now(),
    actor  text        NOT NULL,
    action text        NOT NULL,
    target text        NOT NULL,
    detail jsonb       NOT NULL DEFAULT '{}'
);

-- Incident summaries (issue 32 item 2, ADR 0046): a postmortem draft kept with the packet it
-- was drafted from and that packet's sha256. The same packet drafted by the same model and
-- prompt is one row (a second `ops incident` returns it), so a rerun writes nothing new.
-- The packet holds identifiers and codes only (policies/incident_packet.py).
CREATE TABLE incident_drafts (
    id             bigserial   PRIMARY KEY,
    tenant_id      text        NOT NULL,            -- '*': every tenant
    since          timestamptz NOT NULL,
    until          timestamptz NOT NULL,
    packet_hash    text        NOT NULL,
    packet         jsonb       NOT NULL,
    draft          jsonb       NOT NULL,
    provider       text        NOT NULL,
    model          text        NOT NULL,
    prompt_version text        NOT NULL,
    status         text        NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'REVIEWED')),
    reviewed_by    text,
    reviewed_at    timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (packet_hash, provider, model, prompt_version)
);

-- The circuit on monitor thresholds (issue 11, item 3): one row per signal that a target is
-- misbehaving for an (adapter, tenant). Counting these in a window closes the kill switch by
-- itself (adapters/postgres_circuit.py). UNIQUE keeps a retried activity from counting twice.
CREATE TABLE circuit_signals (
    id         bigserial   PRIMARY KEY,
    adapter    text        NOT NULL,
    tenant_id  text        NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('unknown_write', 'duplicate')),
    signal_key text        NOT NULL,     -- the action key (and what saw it) the signal is about
    at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kind, signal_key)
);
CREATE INDEX circuit_signals_window ON circuit_signals (adapter, tenant_id, kind, at);

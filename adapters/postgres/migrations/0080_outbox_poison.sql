-- Poison isolation for the outbox relay (issue 25, ADR 0030). A row the relay cannot deliver for
-- any reason but "Temporal is not reachable" is retried with its own backoff (next_attempt_at),
-- its tries and last error code kept (attempts, last_error), and moved aside (parked_at,
-- parked_reason) after a bounded number of tries, so it stops holding anyone back. Order is kept
-- per tenant and entity only (entity_id, read from the event when it parses): a row waits only
-- for older live rows of its own tenant and entity. An operator retries a moved-aside row
-- (tollgate ops outbox retry) or drops it (dropped_at; kept as the record of what was posted).
ALTER TABLE outbox
    ADD COLUMN entity_id       text,
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN parked_at       timestamptz,
    ADD COLUMN parked_reason   text,
    ADD COLUMN dropped_at      timestamptz;

-- The relay's work list: live rows (unsent, not moved aside, not dropped), per entity, in order.
CREATE INDEX outbox_live ON outbox (tenant_id, entity_id, id)
    WHERE sent_at IS NULL AND parked_at IS NULL AND dropped_at IS NULL;
CREATE INDEX outbox_parked ON outbox (id) WHERE parked_at IS NOT NULL AND dropped_at IS NULL;

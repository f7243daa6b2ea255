-- Fan-out (docs/fan-out.md): one idempotency record and one dead-letter slot per
-- (event, consumer), and the stand-in consumers' own writes, each keyed so a second delivery
-- writes nothing.

CREATE TABLE consumer_deliveries (
    event_id     text        NOT NULL,
    consumer     text        NOT NULL,
    event_type   text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('delivered', 'dead_lettered')),
    attempts     int         NOT NULL DEFAULT 1,
    error        text,
    at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, consumer)
);

-- A dead letter holds the ids, the class/code of the last error and how to replay; never the
-- payload (it may hold personal data; the producer's system of record has it).
CREATE TABLE consumer_dead_letters (
    event_id    text        NOT NULL,
    consumer    text        NOT NULL,
    event_type  text        NOT NULL,
    tenant_id   text        NOT NULL,
    retry_state text        NOT NULL,
    error       text        NOT NULL,
    replay_plan text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (event_id, consumer)
);

CREATE TABLE inventory_reservations (
    event_id  text NOT NULL,
    order_id  text NOT NULL,
    sku       text NOT NULL,
    quantity  int  NOT NULL,
    PRIMARY KEY (order_id, sku)
);

CREATE TABLE order_notifications (
    event_id    text PRIMARY KEY,
    tenant_id   text NOT NULL,
    order_id    text NOT NULL,
    customer_id text NOT NULL,
    state       text NOT NULL DEFAULT 'REQUESTED'
);

CREATE TABLE analytics_events (
    event_id    text PRIMARY KEY,
    event_type  text        NOT NULL,
    tenant_id   text        NOT NULL,
    occurred_at timestamptz NOT NULL,
    total_cents bigint
);

-- Issue 29, item 3: the IETF Idempotency-Key header on POST /v1/items and the decision API.
-- The first answer a key got is kept with the sha256 of the body it came with: the same key and
-- body get this answer again, the same key with another body is refused (409). The key is the
-- client's; it names a retry, never a person, and the answer is what the client already saw.
CREATE TABLE idempotency_keys (
    tenant      text        NOT NULL,
    route       text        NOT NULL,
    key         text        NOT NULL,
    body_sha256 text        NOT NULL,
    status      smallint    NOT NULL,
    answer      jsonb       NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, route, key)
);

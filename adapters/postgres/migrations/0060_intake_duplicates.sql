-- Duplicates prevented (issue 11, item 1). A duplicate delivery leaves no row of its own (that
-- is the point), so the place that answers "duplicate" bumps a counter here in the same
-- transaction as its answer: the figure survives a worker restart and every worker scrapes the
-- same value. ``channel``: http (the HTTP intake's outbox store answered), update (the running
-- workflow's intake update answered a second delivery) or gate (the worker's idempotency gate
-- found the key admitted by an earlier run). ``stage``: in_flight (the first delivery had no
-- final outcome yet) or after_close.
CREATE TABLE intake_duplicates (
    tenant_id text   NOT NULL,
    channel   text   NOT NULL CHECK (channel IN ('http', 'update', 'gate')),
    stage     text   NOT NULL CHECK (stage IN ('in_flight', 'after_close')),
    n         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, channel, stage)
);

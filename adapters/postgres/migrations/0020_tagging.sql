-- The tagging domain (docs/tagging.md): saved items, their one tagging job, the user's tags,
-- the item-tag links and the audit of removals that keeps a retry from bringing a tag back.
-- Numbered 0020 so the care-reminder migrations (0004+) can grow without a renumbering.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE items (
    id          bigserial   PRIMARY KEY,
    user_id     text        NOT NULL,
    url         text        NOT NULL,
    title       text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    deleted_at  timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- Saving the same live page twice returns the first row; a deleted item frees its URL.
CREATE UNIQUE INDEX items_user_url_live ON items (user_id, url) WHERE deleted_at IS NULL;

-- One job row per item: the row, not the queue, says where the work is. ``started_at`` is the
-- outbox mark: NULL means no workflow start is known to be durable yet, so the relay starts one.
CREATE TABLE tagging_jobs (
    item_id       bigint      PRIMARY KEY REFERENCES items (id),
    user_id       text        NOT NULL,
    state         text        NOT NULL CHECK (state IN ('PENDING', 'PROCESSING', 'SUCCEEDED',
                                                        'FAILED')),
    attempt_count int         NOT NULL DEFAULT 0,
    last_error    text,
    runs          int         NOT NULL DEFAULT 1,
    started_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tagging_jobs_state ON tagging_jobs (state, updated_at);
CREATE INDEX tagging_jobs_unstarted ON tagging_jobs (created_at) WHERE started_at IS NULL;

CREATE TABLE tags (
    id         bigserial   PRIMARY KEY,
    user_id    text        NOT NULL,
    key        text        NOT NULL,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, key)
);
CREATE INDEX tags_key_trgm ON tags USING gin (key gin_trgm_ops);

CREATE TABLE item_tags (
    item_id    bigint      NOT NULL REFERENCES items (id),
    tag_id     bigint      NOT NULL REFERENCES tags (id),
    source     text        NOT NULL,
    confidence real,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (item_id, tag_id)
);

-- Append only: who took which tag off which item. The tagger never re-adds a pair found here.
CREATE TABLE item_tag_removals (
    id         bigserial   PRIMARY KEY,
    item_id    bigint      NOT NULL REFERENCES items (id),
    tag_id     bigint      NOT NULL REFERENCES tags (id),
    removed_by text        NOT NULL,
    removed_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX item_tag_removals_pair ON item_tag_removals (item_id, tag_id);

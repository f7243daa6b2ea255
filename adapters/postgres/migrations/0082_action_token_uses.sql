-- The action token's single use (issue 27, item 2; ADR 0027): the send step takes the token's
-- row before it calls the target. A retried or held-then-resumed send finds its own use and goes
-- on; any other send that presents the same token finds the row taken and is refused.

CREATE TABLE action_token_uses (
    token_id   text        PRIMARY KEY,
    action_key text        NOT NULL,
    -- workflow id / the send's transition number: its retries and re-runs are one use.
    use_id     text        NOT NULL,
    used_at    timestamptz NOT NULL DEFAULT now()
);

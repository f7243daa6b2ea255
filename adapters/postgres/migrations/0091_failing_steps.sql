-- Issue 25: a step that keeps failing (a store write, the decision's recording, open_review)
-- leaves its run retrying with no sign outside Temporal. One row per (workflow, step) once an
-- attempt past the threshold has failed and the step will be tried again; deleted when the step
-- succeeds or fails for good (the run then decides, and shows it in its state). Reason codes
-- and error classes only: never a message, which may quote data.
CREATE TABLE failing_steps (
    workflow_id   text        NOT NULL,
    step          text        NOT NULL,
    tenant_id     text,
    attempts      int         NOT NULL,
    error_class   text        NOT NULL,
    error_code    text        NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (workflow_id, step)
);

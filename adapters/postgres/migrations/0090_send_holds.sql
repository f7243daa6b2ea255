-- Issue 26: a send held by a closed kill switch leaves the event APPROVED and writes no
-- transition, so PostgreSQL could not say it was held. One row per held event: the action's
-- adapter and tenant (the switch rows covering them are read beside it), when the hold began
-- and when the run last looked. Written by the worker each time the send step finds a switch
-- closed (activities/step_watch.py); a row whose event has left APPROVED is over and is not
-- shown (`ops status`, `tollgate trace`), and the next hold's write clears such rows.
CREATE TABLE send_holds (
    workflow_id text        PRIMARY KEY,
    tenant_id   text        NOT NULL,
    adapter     text        NOT NULL,
    since       timestamptz NOT NULL DEFAULT now(),
    checked_at  timestamptz NOT NULL DEFAULT now()
);

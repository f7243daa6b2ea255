-- Who claimed a dead letter's replay: its `dlq_replay` audit row, found by (target, replay).
-- Each replay's end is written with that actor (`REPLAY_RESULT_SQL`, adapters/postgres/
-- dead_letters.py: the run's own write as it ends, ADR 0069, and the command's), and a replay
-- that settles the write names them on the event (`_REPLAYED_BY_SQL`, replay_settle.py). Both
-- read `audit` with no index on `target`: a scan of the whole table, which only grows, per
-- replay end. Partial, as migration 0136's index of the ends is: only `dlq_replay` rows are
-- indexed, so no other audit write pays for it. (Status's lookup of a replay's end uses 0136's.)
CREATE INDEX IF NOT EXISTS audit_replay_claims
    ON audit (target, (detail ->> 'replay')) WHERE action = 'dlq_replay';

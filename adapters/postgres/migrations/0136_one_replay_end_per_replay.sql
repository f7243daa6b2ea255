-- One recorded end per dead-letter replay (ADR 0069). The replay's run writes its own
-- `dlq_replay_result` audit row as it ends, through an activity a retry may run twice, and
-- `tollgate ops dlq replay` still writes it when it hears the end: this index makes the first
-- write the only one (`INSERT ... ON CONFLICT DO NOTHING`, adapters/postgres/ops.py). Rows from
-- before hold one end per replay already: a replay number is claimed once
-- (`OpsStore.claim_replay`) and only the command that claimed it wrote its end.
CREATE UNIQUE INDEX IF NOT EXISTS audit_one_replay_end
    ON audit (target, (detail ->> 'replay')) WHERE action = 'dlq_replay_result';

-- Dead letters left REPLAYED before a replay that stops again reopened its dead letter (ADR
-- 0059, amended) or a refused one closed it (ADR 0066): their replay stopped, so their write
-- is in no operator's queue. PostgreSQL alone knows a replay ended only where the command that
-- ran it heard the end: its `dlq_replay_result` audit row for that replay says `stopped` (the
-- run wrote its dead letter again and ended). Only those are brought back here, and only while
-- the write is still open (a receipt settled since has nothing to replay). One whose replay's
-- resend was refused (a dead letter of the same run and key written since the claim) is closed
-- in favour of that one, as ADR 0066 does now; the others are reopened, as ADR 0059 does now.
-- Each change has its audit row, by `migration:0135`. A REPLAYED dead letter with no recorded
-- end is left alone (its replay may still run): `ops status` names it once it is older than
-- its replay can run (ADR 0066).
-- One statement: every part reads the table as it was before it.
WITH replayed AS (
  SELECT d.id, d.replays, d.workflow_id, d.action_key, d.updated_at
    FROM dead_letters d
   WHERE d.status = 'REPLAYED' AND d.error_code = 'unreconciled_write'
     AND EXISTS (SELECT 1 FROM receipts r WHERE r.action_key = d.action_key
                  AND r.status IN ('PENDING', 'UNKNOWN'))
     AND EXISTS (SELECT 1 FROM audit a WHERE a.action = 'dlq_replay_result'
                  AND a.target = 'dead_letter/' || d.id
                  AND a.detail ->> 'replay' = d.replays::text
                  AND a.detail ->> 'result' = 'stopped')),
-- Written since the claim (a REPLAYED row's updated_at) for the same run and key under
-- another code: the refusal's dead letter that replay wrote.
refused AS (
  SELECT DISTINCT ON (s.id) s.id, s.replays, n.id AS newer, n.error_code
    FROM replayed s
    JOIN dead_letters n ON n.workflow_id = s.workflow_id AND n.action_key = s.action_key
     AND n.id <> s.id AND n.error_code <> 'unreconciled_write' AND n.created_at >= s.updated_at
   ORDER BY s.id, n.id),
closed AS (
  UPDATE dead_letters d SET status = 'CLOSED', closed_by = 'migration:0135', closed_at = now(),
         closed_reason = 'replay ' || f.replays || ' had its resend refused: superseded by'
           || ' dead letter ' || f.newer || ' (' || f.error_code || '), which holds the write now',
         updated_at = now()
    FROM refused f WHERE d.id = f.id
  RETURNING d.id, d.closed_reason),
closed_audit AS (
  INSERT INTO audit (actor, action, target, detail)
  SELECT 'migration:0135', 'dlq_close', 'dead_letter/' || id,
         jsonb_build_object('reason', closed_reason)
    FROM closed),
reopened AS (
  UPDATE dead_letters d SET status = 'OPEN', updated_at = now()
    FROM replayed s
   WHERE d.id = s.id AND NOT EXISTS (SELECT 1 FROM refused f WHERE f.id = s.id)
  RETURNING d.id, d.replays)
INSERT INTO audit (actor, action, target, detail)
SELECT 'migration:0135', 'dlq_reopen', 'dead_letter/' || id,
       jsonb_build_object('reason', 'its replay stopped again (its end recorded) before a'
                          || ' replay that stops reopened its dead letter; approve to replay'
                          || ' again', 'dead_letter', id, 'replays', replays)
  FROM reopened;

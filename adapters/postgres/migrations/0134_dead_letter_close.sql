-- A dead letter an operator closes by hand (`tollgate ops dlq close`, ADR 0060) says who closed
-- it, when and why on its own row, so `ops dlq show` reads them without searching the audit
-- table (which has no index on target). The audit row stays the record; these mirror it.
ALTER TABLE dead_letters ADD COLUMN closed_by text;
ALTER TABLE dead_letters ADD COLUMN closed_at timestamptz;
ALTER TABLE dead_letters ADD COLUMN closed_reason text;

-- Dead letters closed before this file (a replay that found its receipt SUCCEEDED): from the
-- last `dlq_close` audit row of each.
UPDATE dead_letters d SET closed_by = a.actor, closed_at = a.at,
       closed_reason = a.detail ->> 'reason'
  FROM (SELECT DISTINCT ON (target) target, actor, at, detail FROM audit
         WHERE action = 'dlq_close' ORDER BY target, id DESC) a
 WHERE d.status = 'CLOSED' AND a.target = 'dead_letter/' || d.id;

-- The moved-aside rule (MOVED_ASIDE_SQL, adapters/postgres/receipts.py) looks dead letters up
-- by action key for every open receipt, in `ops status` and in each sweep; without an index
-- each lookup read the whole table.
CREATE INDEX dead_letters_action_key ON dead_letters (action_key);

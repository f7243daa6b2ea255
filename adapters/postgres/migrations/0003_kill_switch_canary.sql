-- Reopening a kill switch can be a canary: the first N actions pass, then it closes again until
-- an operator confirms. NULL = no canary (plain open or closed).
ALTER TABLE kill_switches ADD COLUMN canary_remaining int;

-- Dead letters: who approved a replay and how many replays each approval allowed and used.
ALTER TABLE dead_letters ADD COLUMN approvals int NOT NULL DEFAULT 0;
ALTER TABLE dead_letters ADD COLUMN replays int NOT NULL DEFAULT 0;
-- What a replay needs (the action request of an unreconciled write); never shown by `dlq show`.
ALTER TABLE dead_letters ADD COLUMN replay_input jsonb;
ALTER TABLE dead_letters ADD COLUMN action_key text;

-- Issue 28: every validator flag of a draft version, with its rule, source and span, kept with
-- the draft, so `tollgate review show` and the inbox still show them after the event has ended
-- (the workflow's query is gone by then). The span is customer text: it is for the reviewer
-- and this table, never for a log line. Rows from before this migration have no flags kept.
ALTER TABLE drafts ADD COLUMN flags jsonb NOT NULL DEFAULT '[]';

-- Review: the SLA of the open review, so the policy gate can count a tenant's overdue reviews
-- (the backlog guard), and idempotent audit rows for the escalation notice.

-- When the open review's SLA passes, on the workflow's clock. Written each time the record
-- enters AWAITING_REVIEW; meaningful only while state = 'AWAITING_REVIEW'.
ALTER TABLE events ADD COLUMN review_due_at timestamptz;
CREATE INDEX events_review_due ON events (tenant_id, review_due_at)
    WHERE state = 'AWAITING_REVIEW';

-- The daily limit counts a customer's receipts through their events.
CREATE INDEX receipts_workflow ON receipts (workflow_id);

-- A retried notification writes its audit row once. NULL for rows that need no key.
ALTER TABLE audit ADD COLUMN dedupe_key text UNIQUE;

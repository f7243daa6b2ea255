"""The one statement that records a workflow step: its numbered transitions, the events row's
new state and the step's own write (draft, accepted decision, outcome), in one round trip.

Every insert is keyed (``workflow_id``, ``seq``; draft version; decision key), so a retried
step writes nothing new and ``last_seq`` keeps a stale step from moving the state back.
"""

from __future__ import annotations

from typing import Any

from contracts import StepRecord

TRANSITION_SQL = """
WITH t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
), last AS (
    SELECT seq, to_state FROM t ORDER BY seq DESC LIMIT 1
), upd AS (
    UPDATE events e SET state = last.to_state, last_seq = last.seq, updated_at = now(),
        reason_code = COALESCE($8, e.reason_code),
        policy_version = COALESCE($7, e.policy_version),
        artifact_version = COALESCE($9, e.artifact_version),
        receipt_key = COALESCE($10, e.receipt_key),
        outcome = COALESCE($11::jsonb, e.outcome)
    FROM last WHERE e.workflow_id = $1 AND e.last_seq < last.seq
    RETURNING e.workflow_id
), tr AS (
    INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason,
                                   policy_version)
    SELECT $1, seq, from_state, to_state, actor, reason, $7 FROM t
    ON CONFLICT (workflow_id, seq) DO NOTHING
    RETURNING seq
), dr AS (
    INSERT INTO drafts (workflow_id, version, status, draft, provider, model, prompt_version,
                        findings, raw_excerpt)
    SELECT $1, $9, d->>'status', d->'draft', d->>'provider', d->>'model', d->>'prompt_version',
           COALESCE(d->'findings', '[]'::jsonb), d->>'raw_excerpt'
    FROM (SELECT $12::jsonb AS d) s WHERE s.d IS NOT NULL
    ON CONFLICT (workflow_id, version) DO NOTHING
    RETURNING version
), rd AS (
    INSERT INTO review_decisions (workflow_id, decision_key, tenant_id, request_id,
                                  draft_version, decision, reviewer, role, reason, accepted,
                                  policy_version)
    SELECT $1, $1 || '#a' || (SELECT seq FROM last), $13, r->>'request_id',
           (r->>'draft_version')::int, r->>'decision', r->>'reviewer', r->>'role',
           r->>'reason', true, $7
    FROM (SELECT $14::jsonb AS r) s WHERE s.r IS NOT NULL
    ON CONFLICT (decision_key) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM tr) AS written
"""

# Entering review also stamps the SLA due time on the events row, in the same statement (two
# UPDATEs of one row in one statement would be undefined, so it joins the one UPDATE).
SET_OUTCOME = "outcome = COALESCE($11::jsonb, e.outcome)"
assert TRANSITION_SQL.count(SET_OUTCOME) == 1
OPEN_REVIEW_SQL = TRANSITION_SQL.replace(
    SET_OUTCOME, f"{SET_OUTCOME},\n        review_due_at = $15::timestamptz"
)


def step_args(step: StepRecord) -> tuple[Any, ...]:
    """``TRANSITION_SQL``'s parameters $1-$14 for one step."""
    ref = step.ref
    ts = step.transitions
    return (
        ref.workflow_id,
        [t.seq for t in ts],
        [t.from_state.value if t.from_state else None for t in ts],
        [t.to_state.value for t in ts],
        [t.actor for t in ts],
        [t.reason for t in ts],
        step.policy_version,
        step.reason_code,
        step.draft.version if step.draft else None,
        step.outcome.receipt.action_key if step.outcome and step.outcome.receipt else None,
        step.outcome.model_dump_json() if step.outcome else None,
        step.draft.model_dump_json() if step.draft else None,
        ref.tenant_id,
        step.decision.model_dump_json() if step.decision else None,
    )

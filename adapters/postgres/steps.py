"""The one statement that records a workflow step: its numbered transitions, the events row's
new state and the step's own write (draft, accepted decision, outcome), in one round trip.

Every insert is keyed (``workflow_id``, ``seq``; draft version; decision key), so a retried
step writes nothing new and ``last_seq`` keeps a stale step from moving the state back.

One exception, found by the chaos campaign: a step is a local activity, which runs inside a
workflow task. When that task is lost (the worker killed, the server restarted before the task
completed), its writes stay but its history does not, and the task runs again; if a new input
arrived meanwhile (the other of two racing review decisions, a timer), it takes another path
and writes other transitions under the same numbers. The run that goes on is the second one,
so a transition whose content differs from the one stored under its number replaces it (the
events row follows), an accepted decision under that number is replaced or marked
``lost_workflow_task``, and each replaced row is chained again as a new version
(docs/receipts.md, "Lost workflow tasks").

That rule is for a step run again after its task was lost, which may decide again. A step
retried within its task must not: ``RECORDED_AT_SQL`` lets a retried attempt find what an
earlier attempt of it recorded (``activities/approval.py``).
"""

from __future__ import annotations

import re
from typing import Any

from contracts import StepRecord

TRANSITION_SQL = """
WITH t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
), last AS (
    SELECT seq, to_state FROM t ORDER BY seq DESC LIMIT 1
), rewrite AS (
    SELECT EXISTS (
        SELECT 1 FROM t JOIN state_transitions s ON s.workflow_id = $1 AND s.seq = t.seq
        WHERE (s.from_state, s.to_state, s.actor, s.reason)
              IS DISTINCT FROM (t.from_state, t.to_state, t.actor, t.reason)) AS yes
), upd AS (
    UPDATE events e SET state = last.to_state, last_seq = last.seq, updated_at = now(),
        reason_code = CASE WHEN rewrite.yes THEN $8 ELSE COALESCE($8, e.reason_code) END,
        policy_version = COALESCE($7, e.policy_version),
        artifact_version = COALESCE($9, e.artifact_version),
        receipt_key = COALESCE($10, e.receipt_key),
        outcome = CASE WHEN rewrite.yes THEN $11::jsonb ELSE COALESCE($11::jsonb, e.outcome) END
    FROM last, rewrite
    WHERE e.workflow_id = $1 AND (e.last_seq < last.seq OR rewrite.yes)
    RETURNING e.workflow_id
), tr AS (
    INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason,
                                   policy_version)
    SELECT $1, seq, from_state, to_state, actor, reason, $7 FROM t
    ON CONFLICT (workflow_id, seq) DO UPDATE SET from_state = EXCLUDED.from_state,
        to_state = EXCLUDED.to_state, actor = EXCLUDED.actor, reason = EXCLUDED.reason,
        policy_version = EXCLUDED.policy_version, at = now()
    WHERE (state_transitions.from_state, state_transitions.to_state, state_transitions.actor,
           state_transitions.reason)
          IS DISTINCT FROM (EXCLUDED.from_state, EXCLUDED.to_state, EXCLUDED.actor,
                            EXCLUDED.reason)
    RETURNING state_transitions.*
), dr AS (
    INSERT INTO drafts (workflow_id, version, status, draft, provider, model, prompt_version,
                        findings, raw_excerpt, flags)
    SELECT $1, $9, d->>'status', d->'draft', d->>'provider', d->>'model', d->>'prompt_version',
           COALESCE(d->'findings', '[]'::jsonb), d->>'raw_excerpt',
           COALESCE(d->'flags', '[]'::jsonb)
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
    ON CONFLICT (decision_key) DO UPDATE SET request_id = EXCLUDED.request_id,
        draft_version = EXCLUDED.draft_version, decision = EXCLUDED.decision,
        reviewer = EXCLUDED.reviewer, role = EXCLUDED.role, reason = EXCLUDED.reason,
        accepted = true, refusal_code = NULL, policy_version = EXCLUDED.policy_version,
        at = now()
    WHERE (review_decisions.request_id, review_decisions.decision, review_decisions.reviewer,
           review_decisions.role, review_decisions.reason, review_decisions.accepted)
          IS DISTINCT FROM (EXCLUDED.request_id, EXCLUDED.decision, EXCLUDED.reviewer,
                            EXCLUDED.role, EXCLUDED.reason, true)
    RETURNING review_decisions.*
), lost AS (
    UPDATE review_decisions d SET accepted = false, refusal_code = 'lost_workflow_task'
    WHERE d.decision_key IN (SELECT $1 || '#a' || seq FROM t) AND d.accepted
      AND ($14::jsonb IS NULL OR d.decision_key <> $1 || '#a' || (SELECT seq FROM last))
    RETURNING d.*
), chained AS (
    -- A row rewritten above is chained here as a new version (its INSERT trigger does not
    -- fire for an update), so `ops audit --verify` holds it to its newest content. The
    -- CTEs read the table as it was before this statement: a row found there was rewritten.
    SELECT audit_chain_link('state_transitions', $1, $13, r.seq::text, 'UPDATE',
                            audit_row_json(r)) FROM tr r
    WHERE EXISTS (SELECT 1 FROM state_transitions o WHERE o.workflow_id = $1 AND o.seq = r.seq)
    UNION ALL
    SELECT audit_chain_link('review_decisions', $1, $13, r.decision_key, 'UPDATE',
                            audit_row_json(r)) FROM rd r
    WHERE EXISTS (SELECT 1 FROM review_decisions o WHERE o.decision_key = r.decision_key)
    UNION ALL
    SELECT audit_chain_link('review_decisions', $1, $13, r.decision_key, 'UPDATE',
                            audit_row_json(r)) FROM lost r
)
SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM tr)
    + 0 * (SELECT count(*) FROM chained) AS written
"""

# Entering review also stamps the SLA due time on the events row, in the same statement (two
# UPDATEs of one row in one statement would be undefined, so it joins the one UPDATE).
SET_OUTCOME = ("outcome = CASE WHEN rewrite.yes THEN $11::jsonb ELSE COALESCE($11::jsonb, "
               "e.outcome) END")
assert TRANSITION_SQL.count(SET_OUTCOME) == 1
OPEN_REVIEW_SQL = TRANSITION_SQL.replace(
    SET_OUTCOME, f"{SET_OUTCOME},\n        review_due_at = $15::timestamptz"
)


_T_CTE = """WITH t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
)"""
_WRITTEN = ("SELECT (SELECT count(*) FROM upd) + (SELECT count(*) FROM tr)\n"
            "    + 0 * (SELECT count(*) FROM chained) AS written")
assert TRANSITION_SQL.count(_T_CTE) == 1 and TRANSITION_SQL.count(_WRITTEN) == 1


def recorded_behind(statement: str) -> str:
    """``TRANSITION_SQL`` ($1-$14) behind ``statement`` (a receipt write ending in its
    ``RETURNING``; its parameters move to $15 on): the step is written only when the statement
    returned its row, which comes back as ``receipt`` (jsonb) beside ``written``. The
    statement's audit entry is queued before the transitions', the order in which two
    statements would have written them. ``rc`` names its row for the caller's edits."""
    return _with(statement, "rc", "EXISTS (SELECT 1 FROM rc)").replace(
        _WRITTEN, "SELECT (SELECT to_jsonb(rc) FROM rc) AS receipt,"
        + _WRITTEN.removeprefix("SELECT"))


def recorded_beside(statement: str, *, then: str = "") -> str:
    """``TRANSITION_SQL`` ($1-$14) with ``statement`` (its parameters moved to $15 on, its
    result unread) in one round trip, writing only the transitions whose numbers hold nothing
    yet: a step already recorded under its number, whatever its reason, is left as it is (where
    ``TRANSITION_SQL`` alone would rewrite it as a lost workflow task's). ``then``: more CTEs
    (``name AS (...)``, its parameters moved as the statement's) that may read the statement's
    rows as ``side``."""
    return _with(statement, "side", """NOT EXISTS (SELECT 1 FROM state_transitions s
                      WHERE s.workflow_id = $1 AND s.seq = t.seq)""", then)


def _with(statement: str, name: str, where: str, then: str = "") -> str:
    """``TRANSITION_SQL`` with ``statement`` first as the CTE ``name`` (its parameters moved
    past the 14 of the transitions), then the CTEs ``then``, and the transitions kept only
    ``where``."""
    def shift(sql: str) -> str:
        return re.sub(r"[$]([0-9]+)", lambda m: f"${int(m.group(1)) + 14}", sql)

    more = f", {shift(then)}" if then else ""
    return TRANSITION_SQL.replace(_T_CTE, f"""WITH {name} AS (
    {shift(statement)}
){more}, t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
    WHERE {where}
)""")


# When this very step was recorded: every transition stored under its number with its content
# (and its accepted decision, if it carries one), else NULL. The latest time of its rows.
RECORDED_AT_SQL = """
WITH t AS (
    SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])
        AS t(seq, from_state, to_state, actor, reason)
), same AS (
    SELECT s.at FROM t JOIN state_transitions s ON s.workflow_id = $1 AND s.seq = t.seq
    WHERE (s.from_state, s.to_state, s.actor, s.reason)
          IS NOT DISTINCT FROM (t.from_state, t.to_state, t.actor, t.reason)
)
SELECT max(at) FROM same
HAVING count(*) = (SELECT count(*) FROM t) AND ($7::jsonb IS NULL OR EXISTS (
    SELECT 1 FROM review_decisions d
    WHERE d.decision_key = $1 || '#a' || (SELECT max(seq) FROM t) AND d.accepted
      AND (d.request_id, d.decision, d.reviewer, d.role, d.reason)
          IS NOT DISTINCT FROM ($7->>'request_id', $7->>'decision', $7->>'reviewer',
                                $7->>'role', $7->>'reason')))
"""


def recorded_args(step: StepRecord) -> tuple[Any, ...]:
    """``RECORDED_AT_SQL``'s parameters: ``TRANSITION_SQL``'s $1-$6 and the decision."""
    args = step_args(step)
    return (*args[:6], args[13])


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

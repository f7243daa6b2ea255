"""The baselines of ``tollgate bench``: the workflow a team would write without Tollgate.

Both have the pipeline's shape and nothing else: the steps of ``ProcessEventWorkflow``'s happy
path in ``SHAPE``, each an activity that returns its input, one search attribute set when it
starts waiting (so the reviewer finds it as it finds a Tollgate record) and one signal wait. No
validation, store, policy or receipts. Both keep the SDK's default sandbox, as a team would.

- ``same-shape``: each step run the way Tollgate runs it (normal on the main queue, normal on a
  draft queue of its own, or local): the skeleton of Tollgate's own shape, doing no work.
- ``naive``: every step a normal activity (the draft on its own queue), as a team writes it
  first, before it learns which steps may be local.

``tollgate bench`` prints the histories' shape side by side and warns when they differ: update
``SHAPE`` when the pipeline changes. Intake mirrors ``starter.submit``: update-with-start
(USE_EXISTING, REJECT_DUPLICATE) whose update answers once the first step has run, so every
acknowledgement means "checked and durable".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from temporalio import activity, workflow
from temporalio.common import SearchAttributeKey, SearchAttributeUpdate

from tollgate.bench.variant import END, PLAIN, REVIEW_TIMER, SEND_TIMER, START, Variant, filler

with workflow.unsafe.imports_passed_through():
    from workflows import timeouts as t

Kind = Literal["activity", "draft", "local", "ack", "wait"]
#: ProcessEventWorkflow's happy path, in order (the Tollgate step each stands for).
SHAPE: tuple[tuple[str, Kind], ...] = (
    ("validate_event", "local"),
    ("intake answered", "ack"),
    ("load_context", "activity"),
    ("draft_message", "draft"),
    # Fused in a one-marker-shape run (ADR 0053): the gate's counts with the review's opening,
    # the re-count with the approval's record and the action token's mint.
    ("gate_and_open_review (counts, DRAFTED, AWAITING_REVIEW)", "local"),
    ("review", "wait"),
    ("approve_and_mint (re-count, APPROVED, action token)", "local"),
    # Records the run's end with its receipt's settle (ADR 0057): no record_step after it.
    ("execute_action (settle, SUCCEEDED)", "activity"),
)
SEND = SHAPE[-1][0]
#: The dev stack registers this keyword; a baseline sets it once, when it starts waiting.
WAITING = SearchAttributeKey.for_keyword("TollgateState")
AWAITING_REVIEW = "AWAITING_REVIEW"
#: Tollgate's other attributes, for the ``attrs`` variants (``tollgate.bench.variant``).
TENANT_KEY, EVENT_TYPE_KEY = (SearchAttributeKey.for_keyword(n)
                      for n in ("TollgateTenant", "TollgateEventType"))
TICKET = SearchAttributeKey.for_keyword("TollgateReviewTicket")
DUE = SearchAttributeKey.for_datetime("TollgateReviewDue")


class BaselineActivities:
    """Each step returns its input; the draft step first waits as long as the model would."""

    def __init__(self, model_latency: float = 0.0) -> None:
        self.model_latency = model_latency

    @activity.defn(name="baseline_step")
    async def step(self, value: str) -> str:
        return value

    @activity.defn(name="baseline_draft")
    async def draft(self, value: str) -> str:
        if self.model_latency > 0:
            await asyncio.sleep(self.model_latency)
        return value

    @activity.defn(name="baseline_local_step")
    async def local_step(self, value: str) -> str:
        return value

    def main_queue(self) -> list[Callable[..., Any]]:
        return [self.step, self.local_step]


class _Baseline:
    """The handlers both baselines share; ``_steps`` runs ``SHAPE``."""

    def __init__(self) -> None:
        self._checked = False
        self._approved = False
        self._intake_calls = 0

    # ``pad``: bytes a variant carries (``tollgate.bench.variants``); the baselines send none.
    @workflow.update
    async def intake(self, pad: str = "") -> str:
        self._intake_calls += 1
        first = self._intake_calls == 1
        await workflow.wait_condition(lambda: self._checked)
        return "accepted" if first else "duplicate"

    @workflow.signal
    def approve(self, pad: str = "") -> None:
        self._approved = True

    @workflow.update
    async def decide(self, pad: str = "") -> str:
        """The decision as an update (a variant's): answered once taken, as Tollgate's is."""
        self._approved = True
        return "approved"

    async def _steps(self, raw: str, *, draft_queue: str, naive: bool,
                     variant: Variant = PLAIN, send_queue: str | None = None) -> str:
        value = raw[:len(raw) - variant.pad(START)]  # the start's padding goes no further
        for (name, kind), pad in zip(SHAPE, variant.step_pads(), strict=True):
            sent = value + filler(pad)  # returned too: a step's result carries its padding
            if name == SEND:
                variant.lapse(SEND_TIMER)
            if kind == "activity" or (kind == "local" and naive):
                sent = await workflow.execute_activity_method(
                    BaselineActivities.step, sent,
                    task_queue=send_queue if name == SEND or variant.reads_apart else None,
                    start_to_close_timeout=t.READ_TIMEOUT, retry_policy=t.READ_RETRY)
            elif kind == "draft":
                sent = await workflow.execute_activity_method(
                    BaselineActivities.draft, sent, task_queue=draft_queue,
                    start_to_close_timeout=t.DRAFT_TIMEOUT, retry_policy=t.DRAFT_RETRY)
            elif kind == "local":
                sent = await workflow.execute_local_activity_method(
                    BaselineActivities.local_step, sent,
                    start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
            elif kind == "ack":
                self._checked = True
            else:
                review: list[SearchAttributeUpdate[Any]] = [
                    TICKET.value_set(f"1:{workflow.uuid4()}"),
                    DUE.value_set(workflow.now() + REVIEW_TIMER)] if variant.attrs else []
                workflow.upsert_search_attributes([WAITING.value_set(AWAITING_REVIEW), *review])
                variant.lapse(REVIEW_TIMER)
                await workflow.wait_condition(lambda: self._approved)
            value = sent[:len(value)]
        for n in range(variant.upserts - 1, 0, -1):  # Tollgate's last: with the completion
            workflow.upsert_search_attributes([
                WAITING.value_set(f"SUCCEEDED{'+' * (n - 1)}"),
                *([TICKET.value_unset()] if variant.attrs else [])])
        await workflow.wait_condition(workflow.all_handlers_finished)
        return value + filler(variant.pad(END))


@workflow.defn(name="BenchBaseline")
class BaselineWorkflow(_Baseline):
    """``same-shape``: Tollgate's local steps are local here too."""

    @workflow.run
    async def run(self, raw: str) -> str:
        return await self._steps(raw, draft_queue=SAME_SHAPE.draft_queue, naive=False)


@workflow.defn(name="BenchNaive")
class NaiveBaselineWorkflow(_Baseline):
    """``naive``: every step a normal activity."""

    @workflow.run
    async def run(self, raw: str) -> str:
        return await self._steps(raw, draft_queue=NAIVE.draft_queue, naive=True)


@dataclass(frozen=True)
class Baseline:
    """One baseline: its workflow, type name, task queues and workflow-id prefix; a variant
    (``tollgate.bench.variants``) also its difference and the send's own queue."""

    name: str
    workflow_type: str
    queue: str
    draft_queue: str
    workflow: type[_Baseline]
    variant: Variant = PLAIN

    @property
    def send_queue(self) -> str | None:
        return f"{self.queue}-send" if self.variant.send_queue else None


SAME_SHAPE = Baseline("same-shape", "BenchBaseline", "bench-baseline", "bench-baseline-draft",
                      BaselineWorkflow)
NAIVE = Baseline("naive", "BenchNaive", "bench-naive", "bench-naive-draft",
                 NaiveBaselineWorkflow)
BASELINES = {b.name: b for b in (SAME_SHAPE, NAIVE)}

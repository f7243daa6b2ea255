"""The baseline of ``tollgate bench``: the workflow a team would write without Tollgate.

It has the pipeline's shape and nothing else: the steps of ``ProcessEventWorkflow``'s happy path
in ``SHAPE``, each an activity that returns its input, run the same way (normal on the main
queue, normal on a draft queue of its own, or local), one search attribute set when it starts
waiting (so the reviewer finds it as it finds a Tollgate record) and one signal wait. No
validation, store, policy or receipts. ``tollgate bench`` prints both histories' shape side by
side and warns when they differ: update ``SHAPE`` when the pipeline changes.

Intake mirrors ``starter.submit``: update-with-start (USE_EXISTING, REJECT_DUPLICATE) whose update
answers once the first step has run, so both acknowledgements mean "checked and durable".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Literal

from temporalio import activity, workflow
from temporalio.common import SearchAttributeKey

with workflow.unsafe.imports_passed_through():
    from workflows import timeouts as t

Kind = Literal["activity", "draft", "local", "ack", "wait"]
#: ProcessEventWorkflow's happy path, in order (the Tollgate step each stands for).
SHAPE: tuple[tuple[str, Kind], ...] = (
    ("validate_event", "local"),
    ("intake answered", "ack"),
    ("load_context", "activity"),
    ("draft_message", "draft"),
    ("count_gate_inputs", "local"),
    ("open_review (DRAFTED, AWAITING_REVIEW)", "local"),
    ("review", "wait"),
    ("count_gate_inputs", "local"),
    ("record_step (APPROVED)", "local"),
    ("execute_action", "activity"),
    ("record_step (SUCCEEDED)", "local"),
)
WORKFLOW_NAME = "BenchBaseline"
BASELINE_QUEUE = "bench-baseline"
BASELINE_DRAFT_QUEUE = "bench-baseline-draft"
#: The dev stack registers this keyword; the baseline sets it once, when it starts waiting.
WAITING = SearchAttributeKey.for_keyword("TollgateState")
AWAITING_REVIEW = "AWAITING_REVIEW"


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


@workflow.defn(name=WORKFLOW_NAME)
class BaselineWorkflow:
    def __init__(self) -> None:
        self._checked = False
        self._approved = False
        self._intake_calls = 0

    @workflow.update
    async def intake(self) -> str:
        self._intake_calls += 1
        first = self._intake_calls == 1
        await workflow.wait_condition(lambda: self._checked)
        return "accepted" if first else "duplicate"

    @workflow.signal
    def approve(self) -> None:
        self._approved = True

    @workflow.run
    async def run(self, raw: str) -> str:
        value = raw
        for _, kind in SHAPE:
            if kind == "activity":
                value = await workflow.execute_activity_method(
                    BaselineActivities.step, value,
                    start_to_close_timeout=t.READ_TIMEOUT, retry_policy=t.READ_RETRY)
            elif kind == "draft":
                value = await workflow.execute_activity_method(
                    BaselineActivities.draft, value, task_queue=BASELINE_DRAFT_QUEUE,
                    start_to_close_timeout=t.DRAFT_TIMEOUT, retry_policy=t.DRAFT_RETRY)
            elif kind == "local":
                value = await workflow.execute_local_activity_method(
                    BaselineActivities.local_step, value,
                    start_to_close_timeout=t.STORE_TIMEOUT, retry_policy=t.STORE_RETRY)
            elif kind == "ack":
                self._checked = True
            else:
                workflow.upsert_search_attributes([WAITING.value_set(AWAITING_REVIEW)])
                await workflow.wait_condition(lambda: self._approved)
        await workflow.wait_condition(workflow.all_handlers_finished)
        return value

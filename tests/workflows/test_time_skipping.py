"""Does the time-skipping test server still skip after an approved run was sent? With the real
activities, PostgreSQL and stand-ins: a run of ours, sent at once or settled by its reconciler
child, leaves nothing that holds the server's clock (no activity, timer, child or lock), so six
simulated hours after it pass at once on the module's shared server. What does stop the clock is
the server's own: a child started with ``ParentClosePolicy.ABANDON`` that completes after its
parent closed, as the order confirmation does (docs/testing.md)."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pytest
from temporalio import workflow
from temporalio.api.testservice.v1 import UnlockTimeSkippingRequest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from adapters.broker.cancel import within
from contracts import EventState
from policies.keys import action_key
from tests.conftest import fresh_key, signed_event, start, time_skipping_server, wait_review
from tests.workflows.review_helpers import _decisions_sent_as_an_edge, decide, new_customer
from tollgate.dev.standins import StandIns

__all__ = ["_decisions_sent_as_an_edge"]  # the autouse fixture: refusals audited as an edge's

#: Six simulated hours must pass within this much wall time; held, they would take six hours.
WALL_LIMIT_S = 10.0


async def passes_at_once(env: WorkflowEnvironment, simulated: timedelta) -> float:
    """Wall seconds ``env.sleep(simulated)`` took; fails the test past ``WALL_LIMIT_S``."""
    before, began = await env.get_current_time(), time.monotonic()
    try:
        await within(env.sleep(simulated), WALL_LIMIT_S)
    except TimeoutError:
        pytest.fail(f"{simulated} of simulated time did not pass in {WALL_LIMIT_S:g} s: "
                    "something holds the test server's clock")
    assert await env.get_current_time() - before >= simulated
    return time.monotonic() - began


@pytest.mark.parametrize("write", ["sent", "unknown"])
async def test_six_hours_pass_at_once_after_an_approved_run_is_sent(
        worker_client: tuple[Client, str], env: WorkflowEnvironment, standins: StandIns,
        write: str) -> None:
    client, queue = worker_client
    key, customer = fresh_key(), new_customer(standins)
    if write == "unknown":  # stored, then a 504: the reconciler child settles it by lookup
        standins.messaging.inject("fail_after_write", key=action_key(
            "acme", f"evt-{key}", "messaging", "send_message"))
    handle = await start(client, queue, signed_event(customer, key=key))
    ticket = await wait_review(handle)
    assert (await decide(handle, ticket, tenant_id="acme")).accepted
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED and outcome.receipt is not None
    if write == "unknown":
        reconciler = await client.get_workflow_handle(
            f"reconcile/{outcome.receipt.action_key}").describe()
        assert reconciler.status == WorkflowExecutionStatus.COMPLETED
    await passes_at_once(env, timedelta(hours=6))


# The test server's own behaviour, with nothing of Tollgate's: a parent that hands over to an
# abandoned child and returns, as ConsumeEventWorkflow hands an order to the control core.

@workflow.defn(sandboxed=False)
class Handed:
    def __init__(self) -> None:
        self.go = False

    @workflow.signal
    def release(self) -> None:
        self.go = True

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: self.go)


@workflow.defn(sandboxed=False)
class Handing:
    @workflow.run
    async def run(self, child_id: str) -> None:
        await workflow.start_child_workflow(Handed.run, id=child_id,
                                            parent_close_policy=workflow.ParentClosePolicy.ABANDON)


async def test_an_abandoned_child_ending_after_its_parent_holds_the_clock() -> None:
    """The child's completion takes a time-skipping lock "unlocked by the parent", which a closed
    parent never does (TestWorkflowMutableStateImpl.processCompleteWorkflowExecution). When this
    starts failing, the server was fixed: the fresh server per test that
    tests/workflows/test_fan_out_confirmation.py takes can go."""
    async with time_skipping_server() as env:
        queue = f"tq-{uuid.uuid4().hex[:8]}"
        async with Worker(env.client, task_queue=queue, workflows=[Handing, Handed],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            child = env.client.get_workflow_handle(f"handed-{queue}")
            # Awaited with skipping locked, as the clock was not ours to move yet: unlocked, the
            # server would skip to the waiting child's 10-year run timeout.
            with env.auto_time_skipping_disabled():
                await env.client.execute_workflow(Handing.run, child.id, id=f"handing-{queue}",
                                                  task_queue=queue)
                await passes_at_once(env, timedelta(hours=6))  # the open child holds nothing
                await child.signal(Handed.release)
                await child.result()
            began = time.monotonic()
            await env.sleep(timedelta(seconds=1))
            assert time.monotonic() - began >= 0.9, "the server skips again: see the docstring"
            # Exactly one lock is left over: releasing it lets time skip again.
            await env.client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
            await passes_at_once(env, timedelta(hours=6))

"""The activity interceptor, through a real worker: taxonomy errors reach the workflow as the
classified ApplicationError, for activities and local activities alike, and each activity's log
lines carry the event's context."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs
from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

from activities.interceptor import ActivityContextInterceptor
from contracts import EventRef, StepRecord
from contracts.errors import RateLimited, RejectedError
from tests.eventually import eventually

REF = EventRef(workflow_id="event/acme/evt-1", tenant_id="acme", event_id="evt-1",
               event_type="CARE_DUE", entity_id="C-1", correlation_id="corr", schema_version=3)
log = structlog.get_logger("tests.interceptor")


@activity.defn
async def refuse(step: StepRecord) -> None:
    log.info("refusing")
    raise RejectedError("target_said_no", "the target refused the business rule")


@activity.defn
async def throttled(step: StepRecord) -> None:
    raise RateLimited("target_429", retry_after=7)


def describe(failure: BaseException | None) -> str:
    """type:code:non_retryable:delay, tolerant of any failure so a wrong one fails the test
    instead of the workflow task."""
    if not isinstance(failure, ApplicationError):
        return repr(failure)
    code = failure.details[0] if failure.details else "-"
    delay = failure.next_retry_delay.total_seconds() if failure.next_retry_delay else 0
    return f"{failure.type}:{code}:{failure.non_retryable}:{delay:g}"


@workflow.defn(sandboxed=False)
class Probe:
    @workflow.run
    async def run(self, local: bool) -> list[str]:
        seen = []
        step = StepRecord(ref=REF, policy_version="v", transitions=[])
        once = RetryPolicy(maximum_attempts=1)
        for fn in (refuse, throttled):
            try:
                if local:
                    await workflow.execute_local_activity(
                        fn, step, start_to_close_timeout=timedelta(seconds=5), retry_policy=once)
                else:
                    await workflow.execute_activity(
                        fn, step, start_to_close_timeout=timedelta(seconds=5), retry_policy=once)
            except (ActivityError, ApplicationError) as err:
                # A local activity's failure reaches this test server's workflows unwrapped.
                cause = err.cause if isinstance(err, ActivityError) else err
                seen.append(describe(cause))
        return seen


async def test_taxonomy_errors_are_classified_for_activities_and_local_activities(
    env: WorkflowEnvironment,
) -> None:
    queue = f"icpt-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[Probe],
                      activities=[refuse, throttled], interceptors=[ActivityContextInterceptor()],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        for local in (False, True):
            seen = await env.client.execute_workflow(
                Probe.run, local, id=f"probe-{uuid.uuid4().hex[:8]}", task_queue=queue)
            assert seen == ["rejected:target_said_no:True:0", "rate_limited:target_429:False:7"]


async def test_activity_log_lines_carry_the_event_context(env: WorkflowEnvironment) -> None:
    queue = f"icpt-{uuid.uuid4().hex[:8]}"
    with capture_logs(processors=[structlog.contextvars.merge_contextvars]) as logs:
        async with Worker(env.client, task_queue=queue, workflows=[Probe],
                          activities=[refuse, throttled],
                          interceptors=[ActivityContextInterceptor()],
                          workflow_runner=UnsandboxedWorkflowRunner()):
            await env.client.execute_workflow(
                Probe.run, True, id=f"probe-{uuid.uuid4().hex[:8]}", task_queue=queue)

    line = next(entry for entry in logs if entry["event"] == "refusing")
    assert (line["tenant_id"], line["event_id"]) == ("acme", "evt-1")
    assert (line["activity"], line["attempt"]) == ("refuse", 1)
    assert line["workflow_id"].startswith("probe-")


@activity.defn
async def slow_send(step: StepRecord) -> int:
    """Runs three times its heartbeat timeout without heartbeating itself."""
    await asyncio.sleep(3)
    return activity.info().attempt


@workflow.defn(sandboxed=False)
class LeaseProbe:
    @workflow.run
    async def run(self) -> str:
        step = StepRecord(ref=REF, policy_version="v", transitions=[])
        try:
            attempt = await workflow.execute_activity(
                slow_send, step, start_to_close_timeout=timedelta(seconds=20),
                heartbeat_timeout=timedelta(seconds=1),
                retry_policy=RetryPolicy(maximum_attempts=1))
        except ActivityError as err:
            return f"failed: {type(err.cause).__name__}"
        return f"attempt {attempt}"


@pytest.mark.parametrize("renew", [True, False])
async def test_a_running_activity_keeps_its_heartbeat_lease(
    env: WorkflowEnvironment, renew: bool
) -> None:
    """With the interceptor the lease is renewed while the attempt runs; without it the same
    activity loses its lease after a second (the control that shows the timeout is real)."""
    queue = f"icpt-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[LeaseProbe],
                      activities=[slow_send],
                      interceptors=[ActivityContextInterceptor()] if renew else [],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        outcome = await env.client.execute_workflow(
            LeaseProbe.run, id=f"lease-{uuid.uuid4().hex[:8]}", task_queue=queue)
    assert outcome == ("attempt 1" if renew else "failed: TimeoutError")


#: Released by the test once it has looked at the attempt in flight.
_held = asyncio.Event()


@activity.defn
async def quick_send(step: StepRecord) -> int:
    """An attempt far shorter than a quarter of its lease: it waits only for the test's look."""
    await _held.wait()
    return activity.info().attempt


@workflow.defn(sandboxed=False)
class QuickLeaseProbe:
    @workflow.run
    async def run(self) -> int:
        step = StepRecord(ref=REF, policy_version="v", transitions=[])
        return await workflow.execute_activity(
            quick_send, step, start_to_close_timeout=timedelta(seconds=20),
            heartbeat_timeout=timedelta(seconds=60), retry_policy=RetryPolicy(maximum_attempts=1))


async def test_an_attempt_shorter_than_a_quarter_of_its_lease_sends_no_heartbeat(
    env: WorkflowEnvironment,
) -> None:
    """The lease runs from the attempt's start: the first renewal is due after a quarter of it
    (15 s here), so a quick send costs the server no heartbeat call."""
    _held.clear()
    queue = f"icpt-{uuid.uuid4().hex[:8]}"
    async with Worker(env.client, task_queue=queue, workflows=[QuickLeaseProbe],
                      activities=[quick_send], interceptors=[ActivityContextInterceptor()],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        handle = await env.client.start_workflow(
            QuickLeaseProbe.run, id=f"quick-{uuid.uuid4().hex[:8]}", task_queue=queue)

        async def running() -> list[Any]:
            return list((await handle.describe()).raw_description.pending_activities)

        pending = await eventually(running, "the attempt started",
                                   until=lambda p: bool(p) and p[0].HasField("last_started_time"))
        assert not pending[0].HasField("last_heartbeat_time")
        _held.set()
        assert await handle.result() == 1

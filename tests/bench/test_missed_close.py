"""The bench's wait for a run's end cannot stall on a close the server did not notify (ADR 0083).

Twice a benchmark event took about 20 s end to end though its run took at most 3 s: the bench
waited with a bare ``result()``, a history long poll that answers a missed close only when it
expires. Now the bench waits with ``run_result``: the run is described after a few seconds
without an answer, a closed run is read again, and the event is counted as a missed close,
with the run's own close time beside the time the bench learned of it. ``run_result`` itself
logs each missed close (``missed_close_notification``), for every caller, bench or not. The
missed notification is made by ``tests/missed_close.py`` (a stand-in at the client, on the real
dev server)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from structlog.testing import capture_logs
from temporalio import workflow
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import UnsandboxedWorkflowRunner, Worker

import tollgate.runtime.run_end as run_end
from tests.missed_close import MissFirstClose, missing_closes
from tollgate.bench.pipeline import event_outcome
from tollgate.bench.report import missed_warnings
from tollgate.bench.slowest import missed_line
from tollgate.bench.tally import Tally
from tollgate.runtime.run_end import run_result


@workflow.defn(sandboxed=False)
class Quick:
    @workflow.run
    async def run(self, value: str) -> str:
        return value


async def _closed_run(env: WorkflowEnvironment, queue: str) -> str:
    wf_id = f"quick-{uuid.uuid4()}"
    handle = await env.client.start_workflow(Quick.run, "x", id=wf_id, task_queue=queue)
    await handle.result()
    return wf_id


async def test_a_missed_close_costs_seconds_and_is_counted(
        dev_server: WorkflowEnvironment, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_end, "CHECK_EVERY_S", 0.5)
    queue = f"missed-{uuid.uuid4()}"
    async with Worker(dev_server.client, task_queue=queue, workflows=[Quick],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        missing = MissFirstClose()
        client = missing_closes(dev_server.client, missing)
        wf_id = f"quick-{uuid.uuid4()}"
        await client.start_workflow(Quick.run, "x", id=wf_id, task_queue=queue)
        # A bare result() here would wait for ever (the real poll: 20 s); this returns.
        async with asyncio.timeout(10):
            state, missed = await event_outcome(client, "same-shape", wf_id)
    assert missing.held[wf_id].is_set()  # the first poll was held: the close went unheard
    assert state == "SUCCEEDED"
    closed = (await dev_server.client.get_workflow_handle(wf_id).describe()).close_time
    assert missed is not None and missed == closed
    assert missing.describes[wf_id] == 1  # one describe for the stalled run, no tight polling


async def test_a_missed_close_is_logged_once_with_no_result_in_it(
        dev_server: WorkflowEnvironment, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before, only the bench said so: `ops sweep`, `ops dlq replay` and the demo waited
    # the same way and nothing told the operator (the run's result never goes in the line).
    monkeypatch.setattr(run_end, "CHECK_EVERY_S", 0.5)
    queue = f"missed-{uuid.uuid4()}"
    secret = f"result-{uuid.uuid4().hex}"
    async with Worker(dev_server.client, task_queue=queue, workflows=[Quick],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        missing = MissFirstClose()
        client = missing_closes(dev_server.client, missing)
        heard = await _closed_run(dev_server, queue)
        missing.held[heard] = asyncio.Event()  # not held: its close is heard as usual
        with capture_logs() as logs:
            answered = await run_result(client.get_workflow_handle(heard, result_type=str))
            wf_id = f"quick-{uuid.uuid4()}"
            handle = await client.start_workflow(Quick.run, secret, id=wf_id, task_queue=queue)
            async with asyncio.timeout(10):
                end = await run_result(handle)
    assert answered.missed_close_at is None and end.value == secret
    closed = (await dev_server.client.get_workflow_handle(wf_id).describe()).close_time
    assert closed is not None and end.missed_close_at == closed
    # One line, for the missed close only; the run that answered by itself logged nothing.
    [line] = [e for e in logs if e["event"] == "missed_close_notification"]
    assert line.pop("waited_s") >= run_end.CHECK_EVERY_S
    assert line == {"event": "missed_close_notification", "log_level": "warning",
                    "workflow_id": wf_id, "closed_at": closed.isoformat()}
    assert secret not in str(logs)


async def test_a_run_that_answers_costs_no_describe(dev_server: WorkflowEnvironment) -> None:
    queue = f"missed-{uuid.uuid4()}"
    async with Worker(dev_server.client, task_queue=queue, workflows=[Quick],
                      workflow_runner=UnsandboxedWorkflowRunner()):
        wf_id = await _closed_run(dev_server, queue)
        count = MissFirstClose()
        count.held[wf_id] = asyncio.Event()  # not held: its close is heard as usual
        state, missed = await event_outcome(missing_closes(dev_server.client, count),
                                            "same-shape", wf_id)
    assert (state, missed, count.describes[wf_id]) == ("SUCCEEDED", None, 0)


def test_the_report_says_when_a_close_was_missed() -> None:
    tally = Tally()
    tally.finished("wf-1", 6.2)
    tally.missed_close("wf-1", 6.2, 0.9)
    tally.add_round(1, 6.3, {"server": 10.0}, missed_closes=1)
    summary = tally.summary()
    assert summary["missed_closes"] == [{"workflow_id": "wf-1", "learned_ms": 6200.0,
                                         "closed_ms": 900.0}]
    assert summary["rounds"][0]["missed_closes"] == 1
    line = missed_line("same-shape", summary)
    assert line is not None and "missed close notifications: 1" in line and "5.3 s" in line
    phase = {"settings": {}, "same-shape": Tally().summary(), "tollgate": summary}
    assert missed_warnings({"phases": {"duplicates": phase}}) == [
        "duplicates/tollgate: 1 missed close notification(s), each learned up to 5 s late "
        "(ADR 0083)"]
    # A report from before (no missed_closes key) reads as none missed.
    old = {k: v for k, v in summary.items() if k != "missed_closes"}
    assert missed_line("tollgate", old) is None

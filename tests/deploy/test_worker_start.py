"""``python worker.py`` starts its workers as ``tollgate dev`` does (ADR 0085): the review
update's validator re-checks every decision's token (ADR 0026), and the Temporal SDK's metrics
are served on ``TOLLGATE_SDK_METRICS_PORT`` (docs/metrics.md). Until ADR 0085 the script did
neither: a decision with no token, or one signed by a key nobody trusts, was let into the run."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from pathlib import Path

import pytest
from temporalio.client import WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contracts import EventState, ReviewDecision
from tests.conftest import signed_event
from tests.eventually import eventually
from tests.faults.conftest import Rig
from tests.faults.process_faults_support import new_key, worker_process
from tests.ports import free_port
from tollgate.runtime.identity import issue_dev_token

pytestmark = pytest.mark.e2e

def scrape(port: int) -> str:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            return str(page.read().decode())
    except OSError:
        return ""


async def test_the_worker_script_checks_every_decisions_token_and_serves_sdk_metrics(
        rig: Rig, tmp_path: Path) -> None:
    sdk_port = free_port()
    with worker_process(rig, tmp_path, "start", TOLLGATE_SDK_METRICS_PORT=str(sdk_port)):
        ack = await rig.submit(signed_event(rig.customer(), key=new_key()))
        ticket = await rig.wait_review(ack.workflow_id)
        handle = rig.client.get_workflow_handle(ack.workflow_id)
        forged = issue_dev_token(tmp_path / "elsewhere", reviewer="an.tran", role="care_lead",
                                 tenant="acme")
        for token, code in [(None, "missing_token"), (forged, "bad_token")]:
            with pytest.raises(WorkflowUpdateFailedError) as refused:
                await handle.execute_update("review", ReviewDecision(
                    request_id=ticket["request_id"], decision="approve", reviewer="an.tran",
                    role="care_lead", reason="ok", draft_version=ticket["draft_version"],
                    tenant_id="acme", token=token))
            assert isinstance(refused.value.cause, ApplicationError)
            assert refused.value.cause.type == code
        # Refused in the validator: the run still waits, and a signed decision goes through.
        await rig.approve(ack.workflow_id)
        assert (await rig.outcome(ack.workflow_id)).state == EventState.SUCCEEDED
        page = await eventually(lambda: asyncio.to_thread(scrape, sdk_port), "the SDK metrics",
                                until=lambda p: "temporal_workflow_completed_total" in p)
        assert "temporal_activity_execution_latency_seconds" in page


@pytest.mark.parametrize("variable", ["TOLLGATE_HEALTH_PORT", "TOLLGATE_METRICS_PORT"])
async def test_a_port_the_worker_script_cannot_take_is_one_line(
        rig: Rig, tmp_path: Path, variable: str) -> None:
    """``tollgate dev`` checks its ports before it starts anything; a deployed worker's ports
    were an ``OSError`` traceback (ADR 0086)."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with worker_process(rig, tmp_path, f"port-{variable[9:13]}",
                            **{variable: str(port)}) as proc:
            assert proc.proc is not None
            code = await asyncio.to_thread(proc.proc.wait, 60)
    lines = [line for line in (tmp_path / "worker.log").read_text().splitlines()
             if line.strip() and not line.startswith("{")]
    assert code == 1
    assert lines == [f"{variable}: cannot serve "
                     f"{'the health endpoints' if 'HEALTH' in variable else '/metrics'} on "
                     f"127.0.0.1:{port} (address already in use)"], lines


def _answer(folder: Path, proc_wait: int) -> tuple[int, list[str], str]:
    log = (folder / "worker.log").read_text()
    lines = [line for line in log.splitlines() if line.strip() and not line.startswith("{")]
    return proc_wait, lines, log


@pytest.mark.parametrize("unreachable", ["TEMPORAL_ADDRESS", "DATABASE_URL"])
async def test_a_worker_whose_temporal_or_postgres_does_not_answer_says_so_in_one_line(
        rig: Rig, tmp_path: Path, unreachable: str) -> None:
    """Both were a traceback: the SDK's "Failed client connect", and the pool's
    RetryableError."""
    port = free_port()  # nothing listens there
    value = (f"127.0.0.1:{port}" if unreachable == "TEMPORAL_ADDRESS"
             else f"postgresql://tollgate:pw-not-to-show@127.0.0.1:{port}/tollgate")
    with worker_process(rig, tmp_path, f"down-{unreachable[:4].lower()}",
                        **{unreachable: value}) as proc:
        assert proc.proc is not None
        code, lines, log = _answer(tmp_path, await asyncio.to_thread(proc.proc.wait, 60))
    assert code == 1
    assert lines == ([f"cannot reach Temporal at 127.0.0.1:{port}: start the stack with "
                      "`tollgate dev` (or set TEMPORAL_ADDRESS)"]
                     if unreachable == "TEMPORAL_ADDRESS" else
                     ["cannot reach PostgreSQL: start the stack with `tollgate dev` (or set "
                      "DATABASE_URL)"]), lines
    assert "pw-not-to-show" not in log and "Traceback" not in log

"""A main worker started without a target's URL puts no worker on that target's task queue, so
the target's sends wait there with no timeout (docs/runbook.md, "A target no worker serves").
It started without a word; now it logs one warning at start naming the target, its queue and
the variable to set, and nothing else (never a URL: one may carry credentials)."""

import uuid
from pathlib import Path

from structlog.testing import capture_logs
from temporalio.testing import WorkflowEnvironment

from contracts import target_task_queue
from tests.conftest import worker_settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker


async def test_a_main_worker_without_a_targets_url_says_so_once_at_start(
        env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    without = worker_settings(database_url, standins, tmp_path, queue, TOLLGATE_HELPDESK_URL="")
    assert without.helpdesk_url is None
    with capture_logs() as logs:
        async with main_worker(env.client, without):
            pass
    with capture_logs() as fleet_logs:
        async with main_worker(env.client, worker_settings(database_url, standins, tmp_path,
                                                           queue)):
            pass

    warned = [entry for entry in logs if entry["event"] == "target_not_polled"]
    assert warned == [{
        "event": "target_not_polled", "log_level": "warning", "target": "helpdesk",
        "variable": "TOLLGATE_HELPDESK_URL",
        "task_queue": target_task_queue(queue, "helpdesk"),
        "detail": "TOLLGATE_HELPDESK_URL is not set: this worker does not poll target "
                  "helpdesk's task queue; its sends wait there until a worker with it set runs",
    }]
    # With every target's URL, every target's queue has its worker: no warning.
    assert not [entry for entry in fleet_logs if entry["event"] == "target_not_polled"]

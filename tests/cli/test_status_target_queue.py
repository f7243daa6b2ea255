"""A send runs on its target's task queue, which only a worker with that target's URL polls. On a
fleet where none has the helpdesk's, a triage assignment approved by policy waits there for
ever, by design (no timeout fails it: a worker that comes sends it once), and it waited without
a word: `ops status` said `workers: ok`, `needs a human: nothing`, exit 0 (after an hour only
"oldest APPROVED record is old"), `ops state` said `EXECUTING`, `trace` said the run is
RUNNING. Now all three name the target and its queue (docs/runbook.md, "ops status")."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, target_task_queue
from policies.signing import sign_json
from tests.cli.helpers import live_settings, said_by
from tests.conftest import TENANT_SECRETS, Handle, fresh_key, start, worker_settings
from tests.eventually import eventually
from tollgate.cli.ops import ops
from tollgate.cli.trace import trace
from tollgate.config.settings import Settings
from tollgate.dev.demo_triage import message_received
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e


async def status(capsys: pytest.CaptureFixture[str], s: Settings, *, settling: bool = False
                 ) -> tuple[int | None, str, dict[str, Any]]:
    """``ops status`` read as text, then as JSON: both must say the same. ``settling``: the
    figures may change between the two reads (Temporal refreshing a queue's backlog), so a
    disagreement is not yet an answer (code None) rather than a failure."""
    code, text = await said_by(capsys, s, ops, "status")
    json_code, report = await said_by(capsys, s, ops, "status", "--json")
    if settling and json_code != code:
        return None, text, {}
    assert json_code == code, report
    return code, text, json.loads(report[report.index("{"):])


async def send_scheduled(handle: Handle) -> str:
    """The task queue the run's send is scheduled on, once it is (not started)."""

    async def pending() -> list[tuple[str, int, str]]:
        desc = await handle.describe()
        return [(p.activity_type.name, p.state, p.activity_options.task_queue.name)
                for p in desc.raw_description.pending_activities]

    steps = await eventually(pending, f"{handle.id} scheduling its send",
                             until=lambda found: any(p[0] == "execute_action" for p in found),
                             timeout=30)
    [(_, state, queue)] = steps
    assert state == PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED
    return queue


async def test_a_send_waiting_on_a_target_queue_no_worker_polls_is_named(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    # The fleet: workers without TOLLGATE_HELPDESK_URL (so none polls the helpdesk's queue),
    # whose action tokens live 2 s: a send checks its token as of when it was scheduled, so
    # waiting for a worker does not expire it.
    fleet = worker_settings(database_url, standins, tmp_path, s.task_queue,
                            TEMPORAL_ADDRESS=s.temporal_address, TOLLGATE_HELPDESK_URL="",
                            TOLLGATE_ACTION_TOKEN_TTL_SECONDS="2")
    assert fleet.helpdesk_url is None
    helpdesk_queue = target_task_queue(s.task_queue, "helpdesk")
    key = fresh_key("msg")
    # A booking question without a reply: the policy assigns it at once (auto_route).
    event = message_received("acme", customer, key, now=datetime.now(UTC),
                             body="Hello, can I book an appointment for Miu?")
    async with main_worker(dev_server.client, fleet), draft_worker(dev_server.client, fleet):
        # A target nobody polls and nothing waits on is no page: this fleet need not use it.
        _, _, idle = await status(capsys, fleet)
        handle = await start(dev_server.client, s.task_queue,
                             sign_json(json.dumps(event), TENANT_SECRETS))
        assert await send_scheduled(handle) == helpdesk_queue
        scheduled = time.monotonic()
        # The operator's terminal needs no target URL to see it. Temporal refreshes a queue's
        # backlog figures every few seconds (seen: 5 s), so the first look may miss it.
        code, text, report = await eventually(
            lambda: status(capsys, fleet, settling=True),
            "ops status counting the send on its queue, its text and JSON agreeing",
            until=lambda seen: seen[0] is not None and any(
                t["state"] == "no worker" for t in seen[2].get("targets", [])),
            timeout=20, interval=1)
        _, state = await said_by(capsys, fleet, ops, "state", handle.id)
        _, state_json = await said_by(capsys, fleet, ops, "state", handle.id, "--json")
        _, traced = await said_by(capsys, fleet, trace, handle.id)
        _, traced_json = await said_by(capsys, fleet, trace, handle.id, "--json")
        await asyncio.sleep(max(0.0, 3 - (time.monotonic() - scheduled)))  # past the token
    # The operator sets the URL and restarts the fleet: the send goes out, once.
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        outcome = await handle.result()
        _, _, after = await status(capsys, fleet)

    targets = {t["target"]: t for t in idle["targets"]}
    assert (targets["helpdesk"]["state"], targets["messaging"]["state"]) == ("not polled", "ok")
    assert not any("helpdesk" in why for why in idle["needs_a_human"])

    targets = {t["target"]: t for t in report["targets"]}
    assert targets["messaging"]["state"] == "ok"
    helpdesk = targets["helpdesk"]
    assert (helpdesk["state"], helpdesk["task_queue"]) == ("no worker", helpdesk_queue)
    assert helpdesk["waiting"] >= 1
    why = (f"no worker polls target helpdesk's task queue {helpdesk_queue}: "
           f"{helpdesk['waiting']} send(s) or lookup(s) wait there, nothing sent (set "
           "TOLLGATE_HELPDESK_URL on a worker, or close the helpdesk switch first)")
    assert why in report["needs_a_human"]
    assert code == 6, text
    assert f"helpdesk no worker ({helpdesk['waiting']} waiting on task queue {helpdesk_queue}" \
        in text
    assert why in text.strip().splitlines()[-1]
    # PostgreSQL says APPROVED (no receipt opened yet), the workflow EXECUTING: now with why.
    assert state.strip() == (f"EXECUTING · waits for a worker of target helpdesk: none polls "
                             f"task queue {helpdesk_queue} (set TOLLGATE_HELPDESK_URL on a "
                             "worker)")
    assert json.loads(state_json[state_json.index("{"):]) == {
        "workflow_id": handle.id, "state": "EXECUTING", "status": "RUNNING",
        "waits_for": {"target": "helpdesk", "task_queue": helpdesk_queue,
                      "variable": "TOLLGATE_HELPDESK_URL"}}
    # The operator tracing the stuck event is told the same, on the run's line.
    waiting = (f"waits for a worker of target helpdesk: none polls task queue {helpdesk_queue}"
               " (set TOLLGATE_HELPDESK_URL on a worker)")
    [run_line] = [line for line in traced.splitlines() if line.lstrip().startswith("run ")]
    assert f"{handle.id} RUNNING · {waiting}  http" in run_line, traced
    [run] = json.loads(traced_json[traced_json.index("{"):])["runs"]
    assert run["waits_for"] == {"target": "helpdesk", "task_queue": helpdesk_queue,
                                "variable": "TOLLGATE_HELPDESK_URL"}

    assert outcome.state == EventState.SUCCEEDED, outcome
    assert outcome.receipt is not None
    assert standins.helpdesk.posts_for(outcome.receipt.action_key) == 1
    assert {t["target"]: t["state"] for t in after["targets"]}["helpdesk"] == "ok"
    assert not any("helpdesk" in why for why in after["needs_a_human"])

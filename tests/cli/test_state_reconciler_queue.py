"""An unknown write's reconciler runs its lookups on the target's task queue, which only a worker
with that target's URL polls. When the fleet loses the URL mid-reconcile, the lookup waits there
with no timeout while the event's run only waits for its child: `ops state` of the event said
`RECONCILING` and nothing more (it looked at the event's own steps only). Now it names the
child run and the target's queue; `trace` says it on the reconciler's run line."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, target_task_queue
from policies.signing import sign_json
from tests.cli.helpers import live_settings, said_by
from tests.conftest import CONVERTER, TENANT_SECRETS, Handle, fresh_key, start, worker_settings
from tests.eventually import eventually
from tollgate.cli.ops import ops
from tollgate.cli.trace import trace
from tollgate.dev.demo_triage import message_received
from tollgate.dev.stack_config import search_attribute_args
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker

pytestmark = pytest.mark.e2e

#: How long the helpdesk hides the assignment it took from lookups: longer than the first
#: fleet runs, so its lookups find nothing and the reconciler is still looking when it stops
#: (it stops as soon as the reconciler is started: 0.2 s after, here); the last phase waits
#: for the rest of it.
HIDDEN_S = 6


@pytest.fixture(scope="module")
async def dev_server() -> AsyncIterator[WorkflowEnvironment]:
    """The dev server, forgetting a stopped worker's polls after 2 s: by default Temporal lists
    them for 5 minutes, and this test needs a worker on the helpdesk's queue (to make the write
    unknown) before none polls it."""
    binary = Path(sys.executable).parent / "temporal"
    async with await WorkflowEnvironment.start_local(
        data_converter=CONVERTER, dev_server_existing_path=str(binary),
        dev_server_extra_args=[*search_attribute_args(), "--dynamic-config-value",
                               'matching.PollerHistoryTTL="2s"'],
    ) as env:
        yield env


async def reconciling(handle: Handle) -> str:
    """The id of the run's child reconciler, once the run started it."""

    async def children() -> list[str]:
        desc = await handle.describe()
        return [c.workflow_id for c in desc.raw_description.pending_children]

    [child] = await eventually(children, f"{handle.id} starting its reconciler", timeout=60)
    return child


async def test_a_reconciler_waiting_on_a_target_queue_no_worker_polls_is_named(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    fleet = worker_settings(database_url, standins, tmp_path, s.task_queue,
                            TEMPORAL_ADDRESS=s.temporal_address, TOLLGATE_HELPDESK_URL="")
    helpdesk_queue = target_task_queue(s.task_queue, "helpdesk")
    # A booking question: the policy assigns it at once (auto_route). The helpdesk stores the
    # assignment and answers 504: the write is unknown, and the reconciler looks it up by key.
    event = message_received("acme", customer, fresh_key("msg"), now=datetime.now(UTC),
                             body="Hello, can I book an appointment for Miu?")
    standins.helpdesk.inject("fail_after_write", lookup_delay_ms=HIDDEN_S * 1000)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        handle = await start(dev_server.client, s.task_queue,
                             sign_json(json.dumps(event), TENANT_SECRETS))
        child = await reconciling(handle)
        written = time.monotonic()
    # The fleet loses the helpdesk URL: the next lookup waits on the helpdesk's queue.
    async with main_worker(dev_server.client, fleet):
        state = await eventually(lambda: said_by(capsys, fleet, ops, "state", handle.id),
                                 "ops state naming the waiting reconciler",
                                 until=lambda said: "waits for a worker" in said[1],
                                 timeout=45, interval=1)
        _, state_json = await said_by(capsys, fleet, ops, "state", handle.id, "--json")
        _, traced = await said_by(capsys, fleet, trace, handle.id)
    # The operator sets the URL again, past the helpdesk's delay: the lookup finds the write.
    await asyncio.sleep(max(0.0, HIDDEN_S + 1 - (time.monotonic() - written)))
    async with main_worker(dev_server.client, s):
        outcome = await handle.result()

    waiting = (f"waits for a worker of target helpdesk: none polls task queue {helpdesk_queue}"
               " (set TOLLGATE_HELPDESK_URL on a worker)")
    assert child.startswith("reconcile/")
    assert state == (0, f"RECONCILING · child run {child} {waiting}\n")
    assert json.loads(state_json[state_json.index("{"):]) == {
        "workflow_id": handle.id, "state": "RECONCILING", "status": "RUNNING",
        "waits_for": {"target": "helpdesk", "task_queue": helpdesk_queue,
                      "variable": "TOLLGATE_HELPDESK_URL", "child": child}}
    # trace lists the reconciler's run apart: the wait is said on its line, not the event's.
    runs = {line.split()[1]: line for line in traced.splitlines()
            if line.lstrip().startswith("run ")}
    assert f"{child} RUNNING · {waiting}  http" in runs[child], traced
    assert "waits for" not in runs[handle.id]

    assert outcome.state == EventState.SUCCEEDED, outcome
    assert outcome.receipt is not None
    assert standins.helpdesk.posts_for(outcome.receipt.action_key) == 1

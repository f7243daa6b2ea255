"""A run terminated by hand while it waited for review, met by the reviewer's and operator's
commands after its workers have gone: each answers at once and says the run was terminated.
`review list` leaves it out, `review show` prints no --seen to decide with (it once waited 10 s
for a query no worker answers, then `Temporal refused: h2 protocol error`, exit 1), a decision
is refused review_closed, and `ops state` / `trace` say "run terminated" (they printed
AWAITING_REVIEW)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import live_settings, said_by
from tests.conftest import signed_event, start, wait_review
from tollgate.cli.ops import ops
from tollgate.cli.review import review
from tollgate.cli.trace import trace
from tollgate.dev.standins import StandIns
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.workers import draft_worker, main_worker


async def test_a_review_terminated_by_hand_is_said_so_everywhere(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    s, customer = live_settings(dev_server, database_url, standins, tmp_path)
    queue = s.task_queue
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        handle = await start(dev_server.client, queue, signed_event(customer))
        shown = await wait_review(handle)
        await handle.terminate(reason="stopped by hand")
    wid, seen = handle.id, f"v{shown['draft_version']}:{shown['request_id']}"
    token = issue_dev_token(s.state_dir, reviewer="lan.nguyen", role="care_lead", tenant="acme")
    capsys.readouterr()
    began = time.monotonic()

    code, text = await said_by(capsys, s, review, "list", "--tenant", "acme", "--json")
    assert code == 0 and wid not in [r["workflow_id"] for r in json.loads(text)]
    code, text = await said_by(capsys, s, review, "show", wid)
    assert code == 0, text
    assert "state AWAITING_REVIEW (run terminated, no outcome)" in text
    assert "--seen" not in text
    code, text = await said_by(capsys, s, review, "approve", wid, "--seen", seen,
                            "--reason", "late", "--token", token)
    assert (code, text.split(":")[0]) == (1, "refused"), text
    assert "review_closed" in text
    code, text = await said_by(capsys, s, ops, "state", wid)
    assert (code, text.strip()) == (0, "AWAITING_REVIEW (run terminated, no outcome)")
    code, text = await said_by(capsys, s, trace, wid)
    assert code == 0 and text.startswith(f"{wid}  AWAITING_REVIEW (run terminated, no outcome)")
    assert time.monotonic() - began < 8  # no wait for a worker that is not there
    assert (await handle.describe()).status.name == "TERMINATED"  # type: ignore[union-attr]

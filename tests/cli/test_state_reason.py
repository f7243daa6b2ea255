"""`ops state` of a finished event says its recorded reason, as `trace`'s first line and
`review show` do: on a dev stack it printed a bare `STOPPED` for an event stopped by a policy,
and only `trace` said why (the run's search attribute holds the state alone; the reason is
PostgreSQL's)."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import live_settings, said_by
from tests.conftest import fresh_key, signed_event, start
from tollgate.cli.ops import ops
from tollgate.cli.review import review
from tollgate.cli.trace import trace
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker


async def test_state_of_a_stopped_event_says_why(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # `review show` below asks the finished run's query first, and no worker runs then: it
    # reads PostgreSQL once the finished run's query timeout passes (FINISHED_QUERY_TIMEOUT).
    s, _ = live_settings(dev_server, database_url, standins, tmp_path)
    silent = fresh_key("C")
    standins.crm.upsert("acme", silent, first_name="Vy", pet_name="Bo",
                        consent_messaging=False)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        stopped = await start(dev_server.client, s.task_queue, signed_event(silent))
        done = await stopped.result()
    assert done.state == "STOPPED" and done.reason_code, done  # an outcome, with its reason
    wid, reason = stopped.id, done.reason_code
    db = await asyncpg.connect(database_url)
    try:
        assert await db.fetchval("SELECT reason_code FROM events WHERE workflow_id = $1",
                                 wid) == reason
    finally:
        await db.close()
    capsys.readouterr()

    code, text = await said_by(capsys, s, ops, "state", wid)
    assert (code, text.strip()) == (0, f"STOPPED ({reason})"), text
    # Said the same way everywhere.
    code, text = await said_by(capsys, s, trace, wid)
    assert code == 0 and text.startswith(f"{wid}  STOPPED ({reason})"), text
    code, text = await said_by(capsys, s, review, "show", wid)
    assert code == 0 and f"state STOPPED ({reason})" in text, text
    # The JSON keeps the state a script compares alone, the reason beside it.
    code, text = await said_by(capsys, s, ops, "state", wid, "--json")
    assert json.loads(text[text.index("{"):]) == {
        "workflow_id": wid, "state": "STOPPED", "status": "COMPLETED", "reason_code": reason}
    # Without PostgreSQL the search attribute still answers, without a reason.
    bare = s.model_copy(update={"database": s.database.model_copy(update={"url": None})})
    code, text = await said_by(capsys, bare, ops, "state", wid)
    assert (code, text.strip()) == (0, "STOPPED"), text

"""`tollgate ops dlq show` says what a dead letter's code means when its replay plan does not:
a run approved before the action token was minted (``action_token_missing``, the deploy-time
case of ADR 0027) is dead-lettered by the send step's general plan, and the operator reads
what to do from the meaning printed beside the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from activities.dead_letters import DeadLetterActivities
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from contracts import ActionRequest, EventRef, StepFailure
from tests.cli.helpers import run_ops
from tests.conftest import fresh_key, worker_settings
from tollgate.dev.standins import StandIns


async def test_an_untokened_send_is_explained_next_to_its_code(
    database_url: str, standins: StandIns, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    s = worker_settings(database_url, standins, tmp_path, "dlq-meaning")
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                           action_key=f"k-{event_id}", channel="sms", body="hi",
                           policy_version="v", approved_by="an.tran")
    pool = await create_pool(database_url, max_size=2)
    try:  # the row exactly as the send step's refusal writes it
        await DeadLetterActivities(OpsStore(pool)).dead_letter_step(StepFailure(
            ref=ref, step="execute_action", error_class="rejected",
            code="action_token_missing", action=action))
        dl_id = await pool.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1",
                                    ref.workflow_id)
    finally:
        await pool.close()

    assert await run_ops(["dlq", "show", str(dl_id)], s) == 0
    lines = capsys.readouterr().out.splitlines()
    names = [line.split(" ", 1)[0] for line in lines]
    assert names.index("meaning") == names.index("error_code") + 1
    said = lines[names.index("meaning")]
    assert "approved before the release that mints one" in said
    assert "new event id" in said and "replay from here is refused" in said

    assert await run_ops(["dlq", "replay", str(dl_id)], s, role="on_call") == 1
    capsys.readouterr()
    assert await run_ops(["dlq", "show", str(dl_id), "--json"], s) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["status"] == "OPEN" and row["meaning"].startswith("The send carried no action")

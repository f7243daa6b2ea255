"""A step that fails for good (reading the customer record, the send) ends the event
DEAD_LETTERED with a dead letter for an operator, instead of failing the workflow
(workflows/failures.py)."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from contracts import EventState
from tests.cli.helpers import run_ops
from tests.conftest import fresh_key, signed_event, start, worker_settings
from tests.eventually import eventually
from tests.faults.conftest import activity_attempts, send_key
from tests.faults.kill_switch_support import approved, customer, held_and_waiting, sent
from tests.faults.step_failures_support import dead_lettered_from_executing
from tollgate.dev.standins import StandIns


async def test_a_send_without_an_approval_on_record_is_dead_lettered(
    worker_client: tuple[Client, str], standins: StandIns, db: asyncpg.Pool,
    database_url: str, tmp_path: Path, target_mode: str, capsys: pytest.CaptureFixture[str],
) -> None:
    """Fault: the approval is no longer on record when the send step runs (a database restored
    from before it); a closed kill switch holds the send while it is withdrawn.
    Evidence: the send step answered "held", then refused with no_approval_on_record.
    Invariant: nothing sent; the workflow completes DEAD_LETTERED (not failed), the events row,
    query and search attribute agree, the transitions have no gap (the send step's EXECUTING
    is written with the dead letter), one dead letter names the refusal, and
    `tollgate ops dlq replay` refuses it."""
    client, queue = worker_client
    pool, ops = db, OpsStore(db)
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 43", actor="op.kim")
    key = fresh_key("refused")
    handle = await approved(client, queue, signed_event(customer(standins), key=key))
    await eventually(lambda: held_and_waiting(client, handle), "a held send and its re-check")
    withdrawn = await pool.execute(
        "UPDATE review_decisions SET accepted = false WHERE workflow_id = $1", handle.id)
    assert withdrawn == "UPDATE 1"
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")

    outcome = await handle.result()  # the re-check passes in simulated time
    assert (outcome.state, outcome.reason_code) == (EventState.DEAD_LETTERED,
                                                    "no_approval_on_record")
    assert sent(standins, send_key(key)) == (0, 0)
    assert await pool.fetchval("SELECT count(*) FROM receipts WHERE action_key = $1",
                               send_key(key)) == 0  # refused before a receipt was opened
    await dead_lettered_from_executing(pool.fetch, handle, "no_approval_on_record")
    letters = await pool.fetch(
        "SELECT id, error_class, error_code, state, replay_input FROM dead_letters"
        " WHERE workflow_id = $1", handle.id)
    assert [(r["error_class"], r["error_code"], r["state"], r["replay_input"])
            for r in letters] == [("rejected", "no_approval_on_record", "DEAD_LETTERED", None)]

    settings = worker_settings(database_url, standins, tmp_path, queue)
    dl_id = str(letters[0]["id"])
    # Never replayed from here: an approval is refused as the replay is (its plan says why).
    capsys.readouterr()
    assert await run_ops(["dlq", "approve", dl_id, "--reason", "checked"], settings,
                         role="change_owner") == 1
    assert "not replayed from here" in capsys.readouterr().err
    assert await run_ops(["dlq", "replay", dl_id], settings, role="on_call") == 1
    assert "not replayed from here" in capsys.readouterr().err
    assert sent(standins, send_key(key)) == (0, 0)


async def test_a_customer_record_the_crm_refuses_is_dead_lettered(
    worker_client: tuple[Client, str], standins: StandIns, db: asyncpg.Pool, target_mode: str,
) -> None:
    """Fault: the CRM answers 403 for this customer's record (a revoked grant).
    Evidence: the context step failed once, not retried (a 4xx is no outage).
    Invariant: nothing drafted or sent; the workflow completes DEAD_LETTERED `crm_403`, the
    events row agrees, one dead letter for the integrations on-call names it."""
    client, queue = worker_client
    customer_id = customer(standins)
    standins.crm.inject("reject", key=customer_id)
    key = fresh_key("crm-refused")
    handle = await start(client, queue, signed_event(customer_id, key=key))

    outcome = await handle.result()
    assert (outcome.state, outcome.reason_code) == (EventState.DEAD_LETTERED, "crm_403")
    assert sent(standins, send_key(key)) == (0, 0)
    assert await db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                             handle.id) == "DEAD_LETTERED"
    assert await db.fetchval("SELECT count(*) FROM drafts WHERE workflow_id = $1", handle.id) == 0
    letters = await db.fetch(
        "SELECT error_class, error_code, owner, action_key FROM dead_letters"
        " WHERE workflow_id = $1", handle.id)
    assert [tuple(r.values()) for r in letters] == [
        ("dead_letter", "crm_403", "integrations-oncall", None)]
    assert [(a.attempt, a.result) for a in await activity_attempts(
        client, handle.id, "load_context")] == [(1, None)]

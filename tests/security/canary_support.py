"""For the canary tests: the canary customer's names, a canary run, and where its names were
found."""

from __future__ import annotations

import asyncio
import subprocess
from datetime import UTC, datetime

from contracts import EventState, FinalOutcome, ReviewDecision
from starter import submit
from tests.conftest import fresh_key
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due, signed, wait_state
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import temporal_binary
from tollgate.runtime.client import build_client
from tollgate.runtime.workers import draft_worker, main_worker

FIRST_NAME, PET_NAME = "Canarinh", "Quokkabelle"


PHONE = "+84 936 417 582"
EMAIL = "canary.hoa@tollgate-canary.vn"


def hits(text: str) -> list[str]:
    lowered = text.lower()
    return [v for v in variants() if v.lower() in lowered]


async def run_canary(stack: DevStack) -> tuple[str, str, str]:
    assert stack.standins is not None and stack.codec is not None
    stack.standins.crm.upsert("acme", "C-CANARY", first_name=FIRST_NAME, pet_name=PET_NAME,
                              consent_messaging=True)
    settings = Settings.from_env(stack_env(stack))
    client = await build_client(settings.temporal_address, env=settings.env)
    event = care_due("acme", "C-CANARY", fresh_key("canary"), now=datetime.now(UTC))
    event["payload"]["notes"] = f"call {PHONE} or write to {EMAIL} before the visit"
    async with main_worker(client, settings), draft_worker(client, settings):
        ack = await submit(client, signed(event, settings.tenant_secrets()),
                           task_queue=settings.task_queue)
        await wait_state(client, ack.workflow_id, EventState.AWAITING_REVIEW)
        handle = client.get_workflow_handle(ack.workflow_id, result_type=FinalOutcome)
        ticket = await handle.query("review_ticket")
        await handle.execute_update("review", ReviewDecision(
            request_id=ticket["request_id"], decision="approve", reviewer="lan.nguyen",
            role="care_lead", reason="canary", draft_version=ticket["draft_version"]))
        outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    plain = await asyncio.to_thread(export, stack, ack.workflow_id)
    decoded = await asyncio.to_thread(
        export, stack, ack.workflow_id, "--codec-endpoint", stack.codec.url,
        "--codec-auth", f"Bearer {stack.codec.token}")
    return ack.workflow_id, plain, decoded


def variants() -> list[str]:
    """Every way the canary could be written down: with or without country code, spaced,
    dotted, dashed, bare; the e-mail in any case and percent-encoded."""
    local, country = "936417582", "84"
    groups = ["936", "417", "582"]
    found = {local, f"0{local}", f"{country}{local}", f"+{country}{local}"}
    for sep in (" ", ".", "-"):
        found |= {sep.join(groups), sep.join(["0" + groups[0], *groups[1:]]),
                  f"+{country}{sep}{sep.join(groups)}", f"{country}{sep}{sep.join(groups)}"}
    found |= {EMAIL, EMAIL.upper(), EMAIL.replace("@", "%40"), EMAIL.split("@")[0],
              FIRST_NAME, PET_NAME}
    return sorted(found)


def export(stack: DevStack, wf_id: str, *codec: str) -> str:
    out = subprocess.run(  # noqa: S603 - our own binary, fixed arguments
        [temporal_binary(), "workflow", "show", "--address", str(stack.temporal_address),
         "--workflow-id", wf_id, "--output", "json", *codec],
        capture_output=True, text=True, timeout=60, check=True)
    return out.stdout

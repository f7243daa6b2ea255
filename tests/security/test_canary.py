"""The canary: a customer's phone number, e-mail address and names go through the whole path
and show up nowhere outside PostgreSQL, in any format, except decoded by the codec server."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog

from contracts import EventState, FinalOutcome, ReviewDecision
from starter import submit
from tests.conftest import fresh_key
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due, signed, wait_state
from tollgate.dev.endpoints import stack_env
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports, temporal_binary
from tollgate.observability.logs import configure_logging
from tollgate.runtime.client import build_client
from worker import draft_worker, main_worker

pytestmark = pytest.mark.e2e

PHONE = "+84 936 417 582"
EMAIL = "canary.hoa@tollgate-canary.vn"
FIRST_NAME, PET_NAME = "Canarinh", "Quokkabelle"
PLAIN = base64.b64encode(b"json/plain").decode()


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


def hits(text: str) -> list[str]:
    lowered = text.lower()
    return [v for v in variants() if v.lower() in lowered]


def payload_texts(history_json: str) -> list[str]:
    """The clear text of every ``json/plain`` payload in a history export."""
    texts: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            meta = node.get("metadata")
            if isinstance(meta, dict) and meta.get("encoding") == PLAIN and "data" in node:
                texts.append(base64.b64decode(node["data"]).decode())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(history_json))
    return texts


def export(stack: DevStack, wf_id: str, *codec: str) -> str:
    out = subprocess.run(  # noqa: S603 - our own binary, fixed arguments
        [temporal_binary(), "workflow", "show", "--address", str(stack.temporal_address),
         "--workflow-id", wf_id, "--output", "json", *codec],
        capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


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


async def test_canary_personal_data_stays_out_of_logs_history_and_sqlite(
    tmp_path: Path, database_url: str, capfd: pytest.CaptureFixture[str],
) -> None:
    state = tmp_path / "state"
    log_file = tmp_path / "process.log"
    stack = DevStack(state_dir=state, database_url=database_url, ports=Ports(
        temporal=free_port(), ui=free_port(), crm=0, messaging=0))
    with log_file.open("w") as log:
        configure_logging(logging.DEBUG, stream=log)
        try:
            await asyncio.to_thread(stack.start)
            try:
                wf_id, plain, decoded = await run_canary(stack)
            finally:
                await asyncio.to_thread(stack.stop)
        finally:
            logging.getLogger().handlers.clear()
            structlog.reset_defaults()
    captured = capfd.readouterr()

    # The run really happened and was logged, so finding nothing below means something.
    assert "execute_action" in log_file.read_text()
    (tmp_path / "history-plain.json").write_text(plain)
    (tmp_path / "history-decoded.json").write_text(decoded)
    assert "EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED" in plain.replace("\"", "").upper() or \
        "WorkflowExecutionCompleted" in plain, "the history export is not the whole history"
    # Decoded by the codec server, an operator reads the draft with the customer's name.
    drafts = [t for t in payload_texts(decoded) if '"draft"' in t and f"Hi {FIRST_NAME}" in t]
    assert drafts, "the decoded history does not show the draft"
    assert not [t for t in payload_texts(plain) if FIRST_NAME in t]
    # The scanner finds the canary in every form it was given, wherever it is in clear.
    clear = "\n".join(payload_texts(decoded))
    assert {PHONE, EMAIL, FIRST_NAME, PET_NAME} <= set(hits(clear))

    logs = sorted(p for p in state.rglob("*") if p.is_file() and ".log" in p.name)
    sqlite = sorted(state.glob("temporal.db*"))
    assert sqlite and logs, "nothing to scan: the dev server wrote no SQLite file or log"
    found = {
        "process log": hits(log_file.read_text()),
        "stdout": hits(captured.out), "stderr": hits(captured.err),
        "history export": hits(plain),
        **{p.name: hits(p.read_bytes().decode("latin-1")) for p in logs + sqlite},
    }
    assert {where: h for where, h in found.items() if h} == {}, wf_id

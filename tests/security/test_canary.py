"""The canary: a customer's phone number, e-mail address and names go through the whole path
and show up nowhere outside PostgreSQL, in any format, except decoded by the codec server."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from pathlib import Path

import pytest
import structlog

from tests.ports import free_port
from tests.security.canary_support import (
    EMAIL,
    FIRST_NAME,
    PET_NAME,
    PHONE,
    hits,
    run_canary,
)
from tollgate.dev.stack import DevStack
from tollgate.dev.stack_config import Ports
from tollgate.observability.logs import configure_logging

pytestmark = pytest.mark.e2e

PLAIN = base64.b64encode(b"json/plain").decode()


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

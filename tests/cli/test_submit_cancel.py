"""`tollgate submit` cancelled (Ctrl-C cancels its task) as an event's answer comes back sends
none of the events after it. Each answer was awaited through ``asyncio.wait_for``, which on
Python 3.11 gives back the answer and drops a cancel that lands with it: the command went on
and sent the rest of the file (ADR 0064)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import tollgate.cli.submit as submit_module
import tollgate.intake.submit as intake_submit
from contracts import EventState, IntakeAck
from tests.swallowed_cancel import cancel_as_answered, ends_cancelled
from tollgate.config.settings import Settings


async def test_a_submit_cancelled_as_an_answer_comes_sends_no_more_events(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("".join(json.dumps({"event_id": f"evt-{n}"}) + "\n" for n in range(3)))
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path)})  # no PostgreSQL
    command: asyncio.Task[Any] | None = None
    sent: list[str] = []

    async def connect(s: Settings) -> object:
        nonlocal command
        command = asyncio.current_task()  # the command's own task, where Ctrl-C lands
        return object()

    async def submit(client: object, raw: str, **kwargs: Any) -> IntakeAck:
        await asyncio.sleep(0)  # the call's first await, before the event leaves
        sent.append(json.loads(raw)["event_id"])
        ack = IntakeAck(status="accepted", workflow_id=f"event/acme/{sent[-1]}",
                        state=EventState.RECEIVED)
        assert command is not None
        return await cancel_as_answered(command, ack) if len(sent) == 1 else ack

    monkeypatch.setattr(submit_module, "connect", connect)
    monkeypatch.setattr(intake_submit, "submit", submit)
    go = submit_module.submit.main([str(events)], standalone_mode=False)
    await ends_cancelled(go(settings), "the submit", lambda: f"sent {sent}")
    assert sent == ["evt-0"]

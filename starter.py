"""Producer entry point: ``python starter.py FILE.json`` (or ``-`` for stdin).

A file holds one event, a JSON array of events, or one event per line. Each event is answered
at once: accepted (with its workflow id), duplicate (with the earlier outcome), or invalid
(with the reason; the event is quarantined, never dropped). Nobody waits for a model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Iterable
from datetime import UTC, datetime

from temporalio.client import Client, WithStartWorkflowOperation
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from contracts import EventState, FinalOutcome, IntakeAck, IntakeRequest
from contracts.base import ID_PATTERN
from policies.keys import (
    event_workflow_id,
    payload_fingerprint,
    quarantine_workflow_id,
)
from policies.redaction import personal_data_kind
from tollgate.client import build_client
from tollgate.config import Settings
from tollgate.logging import configure_logging
from workflows.process_event import ProcessEventWorkflow

_ID = re.compile(ID_PATTERN)
_INVALID_END = {EventState.QUARANTINED, EventState.DEAD_LETTERED, EventState.SUPERSEDED}


def workflow_id_for(raw: str) -> str:
    """``event/{tenant}/{key}`` when the input names both, else a quarantine id of its hash."""
    try:
        data = json.loads(raw)
    except ValueError:
        return quarantine_workflow_id(raw)
    if isinstance(data, dict):
        tenant, key = data.get("tenant_id"), data.get("idempotency_key")
        named = [v for v in (tenant, key) if isinstance(v, str) and _ID.match(v)]
        # A key that looks like an e-mail or phone must not reach a workflow id (stored in
        # clear): such an event goes the quarantine way, whose intake names the reason.
        if len(named) == 2 and not personal_data_kind(named[1]):
            return event_workflow_id(*named)
    return quarantine_workflow_id(raw)


def split_events(text: str) -> list[str]:
    """One event, an array of events, or JSON lines; text that parses as none is one event
    (it will be quarantined as malformed, not dropped)."""
    try:
        data = json.loads(text)
    except ValueError:
        lines = [line for line in text.splitlines() if line.strip()]
        return lines if len(lines) > 1 else [text]
    if isinstance(data, list):
        return [json.dumps(item, ensure_ascii=False) for item in data]
    return [text]


async def submit(client: Client, raw: str, *, task_queue: str) -> IntakeAck:
    """Hand one event to Tollgate and return the intake answer (no model is waited for)."""
    ack = await _deliver(client, raw, workflow_id_for(raw), task_queue)
    if ack.reason_code == "idempotency_conflict" and ack.workflow_id != quarantine_workflow_id(raw):
        # Same key, other payload: quarantine this delivery through the ordinary intake path,
        # whose gate sees the conflict and records it; the first delivery is untouched.
        ack = await _deliver(client, raw, quarantine_workflow_id(raw), task_queue)
    return ack


async def _deliver(client: Client, raw: str, wf_id: str, task_queue: str) -> IntakeAck:
    request = IntakeRequest(raw=raw, received_at=datetime.now(UTC))
    start = WithStartWorkflowOperation(
        ProcessEventWorkflow.run, request, id=wf_id, task_queue=task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
    )
    try:
        return await client.execute_update_with_start_workflow(
            ProcessEventWorkflow.intake, request, start_workflow_operation=start)
    except WorkflowAlreadyStartedError:
        pass
    # The first delivery already finished: answer with its outcome.
    previous = await client.get_workflow_handle(wf_id, result_type=FinalOutcome).result()
    if previous.payload_fingerprint != payload_fingerprint(raw):
        return IntakeAck(status="invalid", workflow_id=wf_id, state=previous.state,
                         reason_code="idempotency_conflict",
                         message="this idempotency_key was already used with another payload")
    status = "invalid" if previous.state in _INVALID_END else "duplicate"
    return IntakeAck(status=status, workflow_id=wf_id, state=previous.state,
                     reason_code=previous.reason_code if status == "invalid" else "duplicate",
                     previous=previous)


def describe(ack: IntakeAck) -> str:
    if ack.status == "accepted":
        return f"accepted  {ack.workflow_id}"
    if ack.status == "duplicate":
        if ack.previous:
            return f"duplicate {ack.workflow_id} (earlier outcome: {ack.previous.state})"
        return f"duplicate {ack.workflow_id} (first delivery in progress: {ack.state})"
    return f"invalid   {ack.workflow_id}: {ack.reason_code}: {ack.message or ''}".rstrip(": ")


async def submit_all(raws: Iterable[str], settings: Settings) -> list[IntakeAck]:
    client = await build_client(settings.temporal_address, settings.namespace, env=settings.env)
    acks = []
    for raw in raws:
        ack = await submit(client, raw, task_queue=settings.task_queue)
        print(describe(ack), flush=True)
        acks.append(ack)
    return acks


def read_source(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="event files, or - for stdin")
    args = parser.parse_args(argv)
    configure_logging(logging.WARNING)
    raws = [raw for path in args.files for raw in split_events(read_source(path))]
    acks = asyncio.run(submit_all(raws, Settings.from_env()))
    return 0 if all(a.status != "invalid" for a in acks) else 1


if __name__ == "__main__":
    sys.exit(main())

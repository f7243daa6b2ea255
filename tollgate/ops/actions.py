"""What an operator's commands do beyond reading rows: the receipt-sweep schedule and the
replay of an approved dead letter. ``tollgate ops sweep`` and ``tollgate ops dlq`` are the
command line over it (``tollgate/cli/ops_sweep.py``, ``ops_dlq.py``)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import asyncpg
from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import Receipt, ReceiptStatus
from tollgate.ops.replay_in_flight import replay_in_flight, replay_workflow_id, run_in_flight
from tollgate.runtime.exits import Exit, Failure

#: Dead letters whose replay is a new attempt of the same action; others are fixed upstream.
REPLAYABLE = frozenset({"unreconciled_write"})
#: The workflows this starts, by name (``workflows/sweep.py``, ``workflows/reconcile_write.py``):
#: their method references imported the activities and adapters they run into `ops sweep` and
#: `ops dlq replay`. tests/test_workflow_names.py holds the names to the definitions.
SWEEP_WORKFLOW = "ReceiptSweep"
RECONCILE_WORKFLOW = "ReconcileWrite"
#: The receipt-sweep schedule, made once by `tollgate ops sweep --install` or `tollgate dev`.
SWEEP_SCHEDULE_ID = "tollgate-receipt-sweep"


async def ensure_sweep_schedule(client: Client, task_queue: str) -> bool:
    """Create the receipt-sweep schedule unless it exists. True when it was created."""
    from temporalio.client import (
        Schedule,
        ScheduleActionStartWorkflow,
        ScheduleAlreadyRunningError,
        ScheduleIntervalSpec,
        ScheduleSpec,
    )

    from contracts.sweep import SweepRequest
    from workflows.timeouts import SWEEP_EVERY

    request = SweepRequest()
    action = ScheduleActionStartWorkflow(SWEEP_WORKFLOW, request, id="receipt-sweep",
                                         task_queue=task_queue)
    spec = ScheduleSpec(intervals=[ScheduleIntervalSpec(every=SWEEP_EVERY)])
    try:
        await client.create_schedule(SWEEP_SCHEDULE_ID, Schedule(action=action, spec=spec))
    except ScheduleAlreadyRunningError:
        return False
    return True


def replay_refusal(row: dict[str, Any]) -> str | None:
    """Why dead letter ``row`` is never replayed from here (its plan), or None. Approving one
    is refused for the same reason: an approval nothing can use would only mislead."""
    if row["error_code"] not in REPLAYABLE or not row["replay_input"]:
        return f"dead letter {row['id']} is not replayed from here: {row['replay_plan']}"
    from pydantic import ValidationError

    from contracts import ReconcileRequest

    # A stored request edited by hand that no longer reads would fail the replay after its
    # claim; named by field only (its values may be a customer's).
    try:
        ReconcileRequest.model_validate_json(row["replay_input"])
    except ValidationError as exc:
        fields = ", ".join(sorted({".".join(map(str, e["loc"])) or "-" for e in exc.errors()}))
        return (f"dead letter {row['id']} is not replayed from here: its stored request does "
                f"not read ({fields}); close it (tollgate ops dlq close) and settle the write "
                "by hand")
    return None


def found_settled(receipt: Receipt) -> tuple[Exit, str]:
    """The one line of a replay that found its receipt settled and ran nothing: exit 0 when
    the action happened, 1 when the target refused it (as a replay that ends rejected)."""
    if receipt.status is ReceiptStatus.SUCCEEDED:
        return Exit.OK, (f"not replayed: the action already happened (receipt "
                         f"{receipt.action_key} SUCCEEDED, external id {receipt.external_id})")
    return Exit.REFUSED, (f"not replayed: the target already refused the action for good "
                          f"(receipt {receipt.action_key} {receipt.status.value}, code "
                          f"{receipt.error_code or '-'}); dead letter closed")


async def approve_replay(pool: asyncpg.Pool, row: dict[str, Any], operator: str, reason: str,
                         connect: Callable[[], Awaitable[Client]]) -> str:
    """Allow one more replay of ``row`` as ``operator``: the line to print. Raises ``Failure``
    (exit 1) when it is never replayed from here, is closed, or an earlier replay of it may
    still send."""
    dl_id = int(row["id"])
    refused = replay_refusal(row)
    if refused:
        raise Failure(Exit.REFUSED, refused)
    if row["status"] == "CLOSED":
        raise Failure(Exit.REFUSED, f"dead letter {dl_id} is closed")
    running = await replay_in_flight(row, connect, datetime.now(UTC))
    if running:
        raise Failure(Exit.REFUSED, f"dead letter {dl_id}: not approved: {running}")
    ops = OpsStore(pool)
    if not await ops.approve_dead_letter(dl_id, actor=operator, reason=reason,
                                         replays=int(row["replays"])):
        now = await ops.dead_letter_row(dl_id)
        if now is None or now["status"] == "CLOSED":
            raise Failure(Exit.REFUSED, f"dead letter {dl_id} is closed")
        raise Failure(Exit.REFUSED, f"dead letter {dl_id}: not approved: a replay of it was "
                      "claimed meanwhile; try again once that replay ended")
    return f"dead letter {dl_id} approved for one replay"


async def replay_dead_letter(pool: asyncpg.Pool, row: dict[str, Any], operator: str,
                             connect: Callable[[], Awaitable[Client]],
                             task_queue: str) -> tuple[Exit, str]:
    """A new attempt of the same action (same key, same correlation id), once per approval,
    and never when the receipt already has its final answer. ``connect`` is an async
    callable returning a Temporal client, called once, past the PostgreSQL checks and before
    the claim: that one client asks whether an earlier replay still runs and starts this one
    (Temporal not answering is exit 3 with no approval used).

    Returns the exit code and the line to print; raises ``Failure`` when refused."""
    ops = OpsStore(pool)
    dl_id = int(row["id"])
    refused = replay_refusal(row)
    if refused:
        raise Failure(Exit.REFUSED, refused)
    if row["status"] == "CLOSED":  # taken off the books by a person: never tried again
        raise Failure(Exit.REFUSED, f"dead letter {dl_id} is closed: nothing is replayed")
    # The receipt already has its final answer (it happened, or the target refused it for
    # good): the dead letter closes and the event it stopped follows the receipt, with no run
    # (ADR 0063). A resend of a refused write would only be refused again, or worse.
    receipt = await ReceiptStore(pool).close_found_settled(dl_id, row["action_key"],
                                                           operator=operator)
    if receipt is not None:
        return found_settled(receipt)
    seen = int(row["replays"])
    if int(row["approvals"]) <= seen:
        raise Failure(Exit.REFUSED, f"dead letter {dl_id} has no unused approval: "
                      "`tollgate ops dlq approve` first")
    client = await connect()
    # An approval given while the last replay ran (before approve waited for it) must not
    # start a second replay beside it (ADR 0066).
    running = await run_in_flight(row, client, datetime.now(UTC))
    if running:
        raise Failure(Exit.REFUSED, f"dead letter {dl_id}: not replayed: {running}")
    number = await ops.claim_replay(dl_id, actor=operator, replays=seen)
    if number is None:
        raise Failure(Exit.REFUSED, f"dead letter {dl_id} has no unused approval, or a replay "
                      "of it was claimed meanwhile: `tollgate ops dlq show` it")
    from contracts import ReconcileRequest, ReconcileResult

    # The dead letter's approval is this replay's authority: its resend carries no token.
    request = ReconcileRequest.model_validate(json.loads(row["replay_input"])).model_copy(
        update={"replay_of": dl_id})
    run_id = replay_workflow_id(row, number)
    await ops.replay_started(dl_id, run_id)
    from temporalio.client import WorkflowFailureError
    from temporalio.exceptions import is_cancelled_exception

    from tollgate.runtime.run_end import run_result

    # Started, then waited for with run_result: the operator hears the run's end within
    # seconds even when the server does not notify the result's long poll (ADR 0083).
    handle = await client.start_workflow(RECONCILE_WORKFLOW, request, task_queue=task_queue,
                                         id=run_id, result_type=ReconcileResult)
    try:
        result = (await run_result(handle)).value
    except WorkflowFailureError as exc:
        if not is_cancelled_exception(exc.cause):
            # Terminated, timed out or failed: no result, and whatever it left is the dead
            # letter's to show. Named by the cause's kind only (a message may carry data).
            return Exit.REFUSED, (f"replay {number} of dead letter {dl_id}: the run "
                                  f"{run_ended(exc.cause)}, no result: `tollgate ops dlq show "
                                  f"{dl_id}`")
        # Someone cancelled the run (`temporal workflow cancel`): it recorded its end and left
        # the dead letter REPLAYED, its write unknown; a resend it was making may still land
        # (ADRs 0069, 0070, 0077).
        return Exit.REFUSED, (f"replay {number} of dead letter {dl_id}: cancelled; dead letter "
                              f"{dl_id} left REPLAYED, its write unknown: `tollgate ops dlq "
                              f"show {dl_id}`")
    # The run wrote its end as it ended (ADR 0069), so this writes nothing; kept for a run a
    # worker from before that change ran, whose end only this command hears.
    await ops.record_replay_result(dl_id, actor=operator, replay=number, result=result.status)
    receipt_text = (f"receipt {result.receipt.status} {result.receipt.external_id or ''}"
                    if result.receipt else "no receipt")
    code = Exit.OK if result.status in ("succeeded", "resent") else Exit.REFUSED
    line = f"replay {number} of dead letter {dl_id}: {result.status}, {receipt_text}"
    if result.status == "stopped":  # where the write waits now (ADRs 0059, 0066)
        after = await ops.dead_letter_row(dl_id) or {}
        if after.get("status") == "CLOSED":
            line += f"; dead letter {dl_id} closed: {after['closed_reason']}"
        elif after.get("status") == "OPEN":
            line += f"; dead letter {dl_id} reopened: approve to replay again"
    return code, line


def run_ended(cause: BaseException | None) -> str:
    """How a run that gave no result ended, in words, from its failure's kind alone."""
    from temporalio.exceptions import ApplicationError, TerminatedError, TimeoutError

    if isinstance(cause, TerminatedError):
        return "was terminated"
    if isinstance(cause, TimeoutError):
        return "timed out"
    if isinstance(cause, ApplicationError):
        return f"failed ({cause.type or 'ApplicationError'})"
    return f"failed ({type(cause).__name__})"

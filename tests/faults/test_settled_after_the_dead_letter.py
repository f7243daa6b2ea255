"""A dead letter's write settled without a replay that settles it (ADR 0063): the receipt sweep
finds it at the target, or a replay finds the receipt already settled (SUCCEEDED, or REJECTED:
the target refused it for good) and runs nothing. The event the dead letter stopped follows its
receipt either way, as it does after a replay that settles the write (ADR 0061); it used to
stay STOPPED for good beside a SUCCEEDED receipt, so `ops state`, `trace`, `review show` and
`ops status` said it stopped while its message went out; a replay of one whose receipt the
target had refused for good started a run. A producer's repeat of the event (`tollgate
submit`) is answered with that end too (ADR 0062): it used to name the run's result, STOPPED."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.metrics import MetricsStore
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from contracts import EventState, ReceiptStatus, ReconcileRequest
from contracts.sweep import SweepRequest
from tests.cli.helpers import run_ops, said_by
from tests.conftest import fresh_key, signed_event
from tests.faults.conftest import Rig, send_key
from tollgate.cli.review_show import review_show
from tollgate.cli.submit import submit as submit_command
from tollgate.cli.trace import trace
from workflows.sweep import ReceiptSweepWorkflow

pytestmark = pytest.mark.parametrize("lookup_window_s", [1.0])  # the reconciler's window


@pytest.fixture(autouse=True)
def switch_reopened(db: asyncpg.Pool) -> None:
    """Each test leaves an unknown write or two; ``db`` reopens messaging/acme on the way out
    (which restarts the circuit's count), so the module's tests never close it by themselves."""


async def ops(rig: Rig, *argv: str, role: str = "change_owner") -> int:
    """``tollgate ops ARGV`` as op.kim, holding a token of ``role`` for acme."""
    return await run_ops(list(argv), rig.settings, role=role)


async def stopped_on_its_dead_letter(rig: Rig) -> tuple[str, str, int, int, str]:
    """An event whose write the reconciler could neither find nor resend: the target answers
    504 to the send (and, deduping, to the one resend) and stores nothing. Its run completes
    STOPPED (unreconciled_write), the receipt UNKNOWN, one dead letter. Returns the event's
    workflow id, the action key, the dead letter's id, the event's last transition and the
    event as the producer sent it."""
    event_key = fresh_key("s")
    key = send_key(event_key)
    rig.standins.messaging.inject("gateway_timeout", key=key,
                                  times=2 if rig.mode == "dedupe" else 1)
    raw = signed_event(rig.customer(), key=event_key)
    ack = await rig.submit(raw)
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id, within=90)
    assert (outcome.state, outcome.reason_code) == (EventState.STOPPED, "unreconciled_write")
    [letter] = await rig.sql("SELECT id FROM dead_letters WHERE workflow_id = $1",
                             ack.workflow_id)
    [event] = await rig.sql("SELECT last_seq FROM events WHERE workflow_id = $1",
                            ack.workflow_id)
    return ack.workflow_id, key, int(letter["id"]), int(event["last_seq"]), raw


async def surfaces_at_the_target(rig: Rig, dead_letter: int) -> str:
    """The write the target never confirmed turns up there late; returns its id."""
    [row] = await rig.sql("SELECT replay_input FROM dead_letters WHERE id = $1", dead_letter)
    target = MessagingHttpAdapter(rig.standins.messaging_url)
    try:
        written = await target.execute(
            ReconcileRequest.model_validate_json(row["replay_input"]).action)
    finally:
        await target.aclose()
    return written.external_id


async def followed(rig: Rig, wid: str, before: int) -> tuple[object, ...]:
    """The event's state, reason code and outcome's receipt, and the transitions after
    ``before`` as (seq, from, to, actor, reason)."""
    [event] = await rig.sql("SELECT state, reason_code, outcome FROM events"
                            " WHERE workflow_id = $1", wid)
    after = await rig.sql("SELECT seq, from_state, to_state, actor, reason"
                          " FROM state_transitions WHERE workflow_id = $1 AND seq > $2"
                          " ORDER BY seq", wid, before)
    outcome = json.loads(event["outcome"])
    return (event["state"], event["reason_code"], outcome["state"],
            (outcome["receipt"] or {}).get("status"), [tuple(t) for t in after])


async def says(rig: Rig, capsys: pytest.CaptureFixture[str], wid: str) -> tuple[str, str, str]:
    """What `ops state` says of the event, `trace`'s first line, and all `review show` says."""
    capsys.readouterr()
    assert await run_ops(["state", wid], rig.settings) == 0
    state = capsys.readouterr().out.strip()
    code, traced = await said_by(capsys, rig.settings, trace, wid)
    assert code == 0, traced
    assert await review_show(rig.client, rig.settings, wid) == 0
    return state, traced.splitlines()[0], capsys.readouterr().out


async def resubmitted(rig: Rig, capsys: pytest.CaptureFixture[str], raw: str,
                      folder: Path) -> str:
    """What `tollgate submit` tells the producer who sends ``raw`` again."""
    again = folder / "again.json"
    again.write_text(raw)
    capsys.readouterr()
    code, text = await said_by(capsys, rig.settings, submit_command, str(again))
    assert code == 0, text
    return text.strip()


async def states(rig: Rig) -> dict[str, int]:
    """Events per state as `ops status` counts them."""
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=1)
    try:
        snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    finally:
        await pool.close()
    return {row["state"]: row["count"] for row in snap["states"]}


async def replays(rig: Rig) -> dict[str, int]:
    """acme's `tollgate_dlq_replays_total` per result."""
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=1)
    try:
        figures = await MetricsStore(pool).gauges(datetime.now(UTC))
    finally:
        await pool.close()
    return {r["result"]: r["n"] for r in figures["replays"] if r["tenant_id"] == "acme"}


async def test_the_sweep_finding_the_write_ends_the_event_and_its_dead_letter(
    rig: Rig, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Fault: the write the reconciler dead-lettered; its approved replay stops too (a 504 to
    the resend, or no resend to a target that does not dedupe), which reopens the dead letter
    (OPEN: the write moved aside again, ADR 0059); approved again, a replay is claimed whose
    run has not started (the operator's command died), leaving the write live (REPLAYED); the
    message then surfaces at the target and the receipt sweep finds it.
    Evidence: `tollgate ops sweep` says the event followed and the dead letter closed; the
    receipt SUCCEEDED with the target's id.
    Invariant: the event follows in the sweep's transaction, one numbered transition by
    `sweep`; the dead letter closes saying why, so a replay is refused rather than asked
    for; nothing is sent; the audit chain holds."""
    wid, key, letter, before, raw = await stopped_on_its_dead_letter(rig)
    assert await ops(rig, "dlq", "approve", str(letter), "--reason", "checked") == 0
    if rig.mode == "dedupe":
        rig.standins.messaging.inject("gateway_timeout", key=key)
    assert await ops(rig, "dlq", "replay", str(letter)) == 1  # stopped again
    assert rig.faults_left() == [] and rig.messages(key) == 0
    [row] = await rig.sql("SELECT status FROM dead_letters WHERE id = $1", letter)
    assert row["status"] == "OPEN"  # reopened: it awaits a person again
    [event] = await rig.sql("SELECT state, last_seq FROM events WHERE workflow_id = $1", wid)
    assert (event["state"], event["last_seq"]) == ("STOPPED", before)
    assert await ops(rig, "dlq", "approve", str(letter), "--reason", "checked again") == 0
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=1)
    try:
        assert await OpsStore(pool).claim_replay(letter, actor="op.kim") == 2
    finally:
        await pool.close()
    external_id = await surfaces_at_the_target(rig, letter)
    posts = rig.posts(key)
    await rig.sql("UPDATE receipts SET updated_at = now() - interval '20 minutes'"
                  " WHERE action_key = $1", key)
    counted = await states(rig)
    capsys.readouterr()

    assert await run_ops(["sweep"], rig.settings) == 0  # what the operator runs

    # It says the event followed and the dead letter closed (the worker's log lines share
    # the captured stdout: read the command's).
    lines = capsys.readouterr().out.splitlines()
    assert (f"  followed  {wid}: STOPPED -> SUCCEEDED (receipt_swept); dead letter {letter}"
            " closed") in lines, lines
    [receipt] = await rig.sql("SELECT status, external_id FROM receipts WHERE action_key = $1",
                              key)
    assert tuple(receipt) == ("SUCCEEDED", external_id)
    assert await followed(rig, wid, before) == (
        "SUCCEEDED", "receipt_swept", "SUCCEEDED", "SUCCEEDED",
        [(before + 1, "STOPPED", "SUCCEEDED", "sweep",
          "the receipt sweep found the write at the target, receipt SUCCEEDED")])
    state, first, shown = await says(rig, capsys, wid)
    assert (state, first) == ("SUCCEEDED (receipt_swept)", f"{wid}  SUCCEEDED (receipt_swept)")
    assert "state SUCCEEDED (receipt_swept)" in shown, shown
    assert await resubmitted(rig, capsys, raw, tmp_path) == (
        f"duplicate {wid} (earlier outcome: SUCCEEDED (receipt_swept))")
    now = await states(rig)  # `ops status` counts it where it is now
    assert (now.get("STOPPED", 0), now["SUCCEEDED"]) == (
        counted["STOPPED"] - 1, counted.get("SUCCEEDED", 0) + 1)
    [row] = await rig.sql("SELECT status, closed_by, closed_reason FROM dead_letters"
                          " WHERE id = $1", letter)
    assert tuple(row) == ("CLOSED", "sweep", "the receipt sweep found the write at the"
                          " target: receipt SUCCEEDED, nothing to replay")
    # The dead letter is settled: approving or replaying it is refused, and sends nothing.
    assert await ops(rig, "dlq", "approve", str(letter), "--reason", "again") == 1
    assert await ops(rig, "dlq", "replay", str(letter)) == 1
    # A second sweep finds nothing open and records nothing more.
    await rig.client.execute_workflow(
        ReceiptSweepWorkflow.run, SweepRequest(recheck_recent=0),
        id=f"sweep-{uuid.uuid4().hex[:6]}", task_queue=rig.queue)
    assert len((await followed(rig, wid, before))[4]) == 1  # type: ignore[arg-type]
    assert (rig.posts(key), rig.messages(key)) == (posts, 1)
    assert await run_ops(["audit", "--verify"], rig.settings) == 0


async def test_a_replay_finding_the_receipt_settled_ends_the_event_without_a_run(
    rig: Rig, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Fault: the dead-lettered write surfaced at the target and its receipt was settled
    SUCCEEDED by a settle that let the event be (as the sweep did before ADR 0063); the
    operator approves and replays the dead letter.
    Evidence: the replay says the action already happened and starts no run.
    Invariant: the event follows its receipt in the close's transaction, one numbered
    transition by the operator; the dead letter closes; nothing is sent; the chain holds."""
    wid, key, letter, before, raw = await stopped_on_its_dead_letter(rig)
    external_id = await surfaces_at_the_target(rig, letter)
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=1)
    try:
        await ReceiptStore(pool).settle(key, ReceiptStatus.SUCCEEDED, fence=None,
                                        external_id=external_id)
    finally:
        await pool.close()
    posts = rig.posts(key)
    assert await ops(rig, "dlq", "approve", str(letter), "--reason", "checked") == 0
    capsys.readouterr()
    assert await ops(rig, "dlq", "replay", str(letter)) == 0
    assert "not replayed: the action already happened" in capsys.readouterr().out
    assert await rig.sql("SELECT 1 FROM dead_letters WHERE id = $1"
                         " AND replayed_workflow_id IS NOT NULL", letter) == []
    assert await followed(rig, wid, before) == (
        "SUCCEEDED", "receipt_already_settled", "SUCCEEDED", "SUCCEEDED",
        [(before + 1, "STOPPED", "SUCCEEDED", "operator:op.kim",
          f"dead letter {letter}: not replayed, receipt already SUCCEEDED")])
    state, first, shown = await says(rig, capsys, wid)
    assert (state, first) == ("SUCCEEDED (receipt_already_settled)",
                              f"{wid}  SUCCEEDED (receipt_already_settled)")
    assert "state SUCCEEDED (receipt_already_settled)" in shown, shown
    assert await resubmitted(rig, capsys, raw, tmp_path) == (
        f"duplicate {wid} (earlier outcome: SUCCEEDED (receipt_already_settled))")
    [row] = await rig.sql("SELECT status, closed_by, closed_reason FROM dead_letters"
                          " WHERE id = $1", letter)
    assert tuple(row) == ("CLOSED", "op.kim", "receipt already SUCCEEDED")
    assert (rig.posts(key), rig.messages(key)) == (posts, 1)
    assert await run_ops(["audit", "--verify"], rig.settings) == 0


async def test_a_replay_finding_the_receipt_rejected_ends_the_event_without_a_run(
    rig: Rig, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault: the dead-lettered write was refused by the target for good, its receipt settled
    REJECTED by a settle that let the event be; the operator approves and replays the dead
    letter.
    Evidence: the replay says the target already refused it, exit 1, and starts no run (it
    used to start one, which looked the key up for the target's window and went on to resend).
    Invariant: the dead letter closes with the receipt's outcome and the event follows it,
    STOPPED -> REJECTED, one transition by the operator, in one transaction; nothing is sent;
    the chain holds."""
    wid, key, letter, before, _ = await stopped_on_its_dead_letter(rig)
    pool = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=1)
    try:
        await ReceiptStore(pool).settle(key, ReceiptStatus.REJECTED, fence=None,
                                        error_class="rejected", error_code="target_422")
    finally:
        await pool.close()
    posts = rig.posts(key)
    counted = await replays(rig)
    assert await ops(rig, "dlq", "approve", str(letter), "--reason", "checked") == 0
    capsys.readouterr()
    assert await ops(rig, "dlq", "replay", str(letter)) == 1
    said = capsys.readouterr().out.strip().splitlines()
    assert said[-1] == (f"not replayed: the target already refused the action for good "
                        f"(receipt {key} REJECTED, code target_422); dead letter closed"), said
    assert await rig.sql("SELECT 1 FROM dead_letters WHERE id = $1"
                         " AND replayed_workflow_id IS NOT NULL", letter) == []
    assert await followed(rig, wid, before) == (
        "REJECTED", "receipt_already_settled", "REJECTED", "REJECTED",
        [(before + 1, "STOPPED", "REJECTED", "operator:op.kim",
          f"dead letter {letter}: not replayed, receipt already REJECTED")])
    state, first, _ = await says(rig, capsys, wid)
    assert (state, first) == ("REJECTED (receipt_already_settled)",
                              f"{wid}  REJECTED (receipt_already_settled)")
    [row] = await rig.sql("SELECT status, closed_by, closed_reason FROM dead_letters"
                          " WHERE id = $1", letter)
    assert tuple(row) == ("CLOSED", "op.kim", "receipt already REJECTED")
    # tollgate_dlq_replays_total: refused already, not done already, and no replay started.
    assert await replays(rig) == {**counted,
                                  "already_rejected": counted.get("already_rejected", 0) + 1}
    assert rig.posts(key) == posts
    assert await run_ops(["audit", "--verify"], rig.settings) == 0

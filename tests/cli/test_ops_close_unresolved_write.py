"""`tollgate ops close --unresolved-write`: a run terminated while its write was unknown, whose
key the target never held, left its receipt open and its event RECONCILING for ever: `ops
close` refused it naming the sweep, and the sweep reported it `still open` every time. Now,
once the receipt has stayed open past the sweep's window and the target (asked once more) does
not hold the key, the event ends STOPPED `run_terminated_write_unknown` with the reconciler's
dead letter, the receipt left UNKNOWN and nothing sent; the dead letter's replay is the
operator's usual path, and once it resends, the event follows its receipt to SUCCEEDED (ADR
0061). A key the target holds is left to the sweep, never guessed."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.receipts import MOVED_ASIDE_SQL
from contracts.actions import UNRECONCILED_PLAN
from tests.cli.close_after_send_support import REASON, approve, end_of, send_key
from tests.cli.helpers import consenting, ops_token, said_by
from tests.cli.ops_close_support import closing
from tests.conftest import fresh_key, signed_event, start, worker_settings
from tests.eventually import eventually
from tollgate.cli.ops import ops
from tollgate.cli.trace import trace
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import draft_worker, main_worker

AGED = "UPDATE receipts SET updated_at = now() - interval '20 minutes' WHERE workflow_id = $1"


async def letters(db: asyncpg.Connection, wid: str) -> list[asyncpg.Record]:
    return await db.fetch("SELECT * FROM dead_letters WHERE workflow_id = $1", wid)


async def test_an_unresolved_write_ends_stopped_with_one_dead_letter_and_nothing_sent(
        dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    address = dev_server.client.service_client.config.target_host
    s = worker_settings(database_url, standins, tmp_path, queue, TEMPORAL_ADDRESS=address)
    # The operator's commands see the target's declared lookup window (1 s); it only shortens
    # the replay's lookups at the end: the close still waits the sweep's 15 minutes.
    cli = worker_settings(database_url, standins, tmp_path, queue, TEMPORAL_ADDRESS=address,
                          TOLLGATE_TARGETS='{"messaging": {"lookup": true, "dedupe": true,'
                                           ' "lookup_window_s": 1}}')
    # The on-call closes, by the token's name (lan.ops) recorded in the end.
    close = closing(cli, reason=REASON)
    unresolved = (*close, "--unresolved-write")
    lost, held = fresh_key(), fresh_key()
    db = await asyncpg.connect(database_url)
    async with main_worker(dev_server.client, s), draft_worker(dev_server.client, s):
        runs = [await start(dev_server.client, s.task_queue,
                            signed_event(consenting(standins), key=k)) for k in (lost, held)]
        # The gateway answers 504 and the service never took the message: the write is
        # unknown and the reconciler looks for it (its window is 10 minutes).
        standins.messaging.inject("gateway_timeout", key=send_key(lost))
        await approve(runs[0])
        await eventually(lambda: db.fetchval("SELECT state FROM events WHERE workflow_id = $1",
                                             runs[0].id),
                         "the reconciler looking", until=lambda st: st == "RECONCILING")
        # The target stores the other message and holds its answer: terminated mid-send.
        standins.messaging.inject("hang_after_write", key=send_key(held), ms=20_000)
        await approve(runs[1])
        await eventually(lambda: standins.messaging.posts_for(send_key(held)) == 1,
                         "the send inside its POST")
        for run in runs:
            await run.terminate(reason="stopped by hand")
    wid, held_wid = runs[0].id, runs[1].id
    child = dev_server.client.get_workflow_handle(f"reconcile/{send_key(lost)}")
    assert (await child.describe()).status == WorkflowExecutionStatus.TERMINATED
    try:
        capsys.readouterr()
        # Before the window: refused without the flag (naming it) and with it; nothing written.
        code, text = await said_by(capsys, cli, ops, "close", wid, *close)
        assert code == 1, text
        assert "the write is unknown (state RECONCILING, receipt UNKNOWN)" in text, text
        assert "--unresolved-write" in text and len(text.strip().splitlines()) == 1, text
        # A sweep run now would not look it up: the line says when one will.
        assert "this one changed 0 min ago: run it in 15 min" in text, text
        code, text = await said_by(capsys, cli, ops, "close", wid, *unresolved)
        assert code == 1, text
        assert "(UNKNOWN, state RECONCILING) changed 0 min ago, within 15 min" in text, text
        assert "run tollgate ops sweep in 15 min" in text, text
        assert (await end_of(db, wid))[::3] == ("RECONCILING", 0)
        assert await letters(db, wid) == []

        # Past the window (as the sweep has seen it): the target holds the other's key, so
        # that one is left to the sweep, untouched.
        for run in runs:
            await db.execute(AGED, run.id)
        code, text = await said_by(capsys, cli, ops, "close", held_wid, *unresolved)
        assert code == 1, text
        assert "the messaging target holds the write for its key: tollgate ops sweep" in text
        assert (await end_of(db, held_wid))[::3] == ("EXECUTING", 0)
        assert await letters(db, held_wid) == []

        code, text = await said_by(capsys, cli, ops, "close", wid, *unresolved)
        [letter] = await letters(db, wid)
        assert (code, text.strip()) == (
            0, f"{wid}: closed RECONCILING -> STOPPED (run_terminated_write_unknown), run "
               f"terminated, receipt UNKNOWN, dead letter {letter['id']}; audited"), text
        assert await end_of(db, wid) == (
            "STOPPED", "run_terminated_write_unknown",
            ("RECONCILING", "STOPPED", "operator:lan.ops", "run_terminated_write_unknown"), 1)
        assert await db.fetchval("SELECT status FROM receipts WHERE workflow_id = $1",
                                 wid) == "UNKNOWN"
        outcome = json.loads(await db.fetchval("SELECT outcome FROM events"
                                               " WHERE workflow_id = $1", wid))
        assert (outcome["state"], outcome["receipt"]["status"]) == ("STOPPED", "UNKNOWN")
        assert (letter["error_class"], letter["error_code"], letter["state"], letter["owner"],
                letter["replay_plan"], letter["action_key"], letter["status"]) == (
            "unknown_write", "unreconciled_write", "STOPPED", "messaging-oncall",
            UNRECONCILED_PLAN, send_key(lost), "OPEN")
        replay = json.loads(letter["replay_input"])
        assert (replay["action"]["action_key"], replay["lookup_window"]) == (send_key(lost),
                                                                           "PT1S")
        assert "action_token" not in replay
        detail = json.loads(await db.fetchval(
            "SELECT detail FROM audit WHERE action = 'run_close' AND target = $1", wid))
        assert (detail["receipt_status"], detail["looked_up"]) == ("UNKNOWN", True)
        # Moved aside: the dead letter's, no longer the sweep's nor an open write (ADR 0059).
        assert await db.fetchval(f"SELECT {MOVED_ASIDE_SQL} FROM receipts r"
                                 " WHERE action_key = $1", send_key(lost))

        # Again: already ended, with and without the flag; still one dead letter, one audit.
        for argv in (unresolved, close):
            code, text = await said_by(capsys, cli, ops, "close", wid, *argv)
            assert (code, text.strip()) == (
                0, f"{wid}: already ended STOPPED (run_terminated_write_unknown): nothing to do")
        assert len(await letters(db, wid)) == 1 and (await end_of(db, wid))[3] == 1
        code, text = await said_by(capsys, cli, ops, "dlq", "list")
        assert code == 0 and any("unknown_write/unreconciled_write" in line and wid in line
                                 for line in text.splitlines()), text
        code, text = await said_by(capsys, cli, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
        # Nothing was sent by any of it: the lost POST and the held one, no more.
        assert [standins.messaging.posts_for(send_key(k)) for k in (lost, held)] == [1, 1]
        assert standins.messaging.get_by_key(send_key(lost)) is None

        # The operator's path: approve, replay. The replay looks the key up for the declared
        # second, finds nothing and resends once to this deduping target.
        code, text = await said_by(capsys, cli, ops, "dlq", "approve", str(letter["id"]),
                                   "--reason", "not at the target",
                                   *ops_token(cli, "change_owner"))
        assert code == 0, text
        async with main_worker(dev_server.client, cli):
            code, text = await said_by(capsys, cli, ops, "dlq", "replay", str(letter["id"]),
                                       *ops_token(cli, "on_call"))
        assert code == 0 and "resent, receipt SUCCEEDED" in text, text
        # The replay's run is named on the dead letter and linked from the event's trace.
        replay_run = f"reconcile/{send_key(lost)}/replay-1"
        code, text = await said_by(capsys, cli, ops, "dlq", "show", str(letter["id"]))
        assert code == 0 and f"\nreplayed_workflow_id {replay_run}\n" in text, text
        code, text = await said_by(capsys, cli, trace, wid)
        assert code == 0 and f"  run       {replay_run} COMPLETED" in text, text
        assert standins.messaging.posts_for(send_key(lost)) == 2
        assert standins.messaging.get_by_key(send_key(lost)) is not None
        # The message went out, so the event's record follows its receipt: one more numbered
        # transition, by the operator who replayed, naming the replay (ADR 0061). It used to
        # stay STOPPED (run_terminated_write_unknown) beside a SUCCEEDED receipt.
        assert await end_of(db, wid) == (
            "SUCCEEDED", "dead_letter_replayed",
            ("STOPPED", "SUCCEEDED", "operator:op.kim",
             f"replay 1 of dead letter {letter['id']}: resent, receipt SUCCEEDED"), 1)
        seqs = [r["seq"] for r in await db.fetch(
            "SELECT seq FROM state_transitions WHERE workflow_id = $1 ORDER BY seq", wid)]
        assert seqs == list(range(1, len(seqs) + 1)), seqs
        outcome = json.loads(await db.fetchval("SELECT outcome FROM events"
                                               " WHERE workflow_id = $1", wid))
        assert (outcome["state"], outcome["receipt"]["status"]) == ("SUCCEEDED", "SUCCEEDED")
        code, text = await said_by(capsys, cli, ops, "state", wid)
        assert (code, text.strip()) == (0, "SUCCEEDED (dead_letter_replayed)"), text
        code, text = await said_by(capsys, cli, trace, wid)
        assert code == 0 and text.splitlines()[0] == (
            f"{wid}  SUCCEEDED (dead_letter_replayed)"), text
        code, text = await said_by(capsys, cli, ops, "audit", "--verify")
        assert code == 0 and "intact" in text, text
    finally:
        await db.close()

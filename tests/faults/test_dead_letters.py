"""Dead-letter replay through `tollgate ops`, against a deduping and a non-deduping target:
approved first, at most once per approval, never a blind resend to a target that does not
dedupe, and a lookup before anything is sent. At most one message at the target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from temporalio.client import WorkflowExecutionStatus

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.receipts import ReceiptStore
from contracts import (
    EventState,
    ReceiptStatus,
    ReconcileRequest,
    ReconcileResult,
)
from tests.cli.helpers import run_ops, said_by
from tests.conftest import TENANT_SECRETS, fresh_key, signed_event
from tests.faults.conftest import Rig, send_key
from tests.faults.dead_letters_support import (
    ops,
    seed_unreconciled,
)
from tests.http.conftest import http_settings, post_events
from tollgate.cli.review_show import review_show
from tollgate.cli.submit import submit as submit_command
from tollgate.http.app import create_app
from tollgate.http.deps import Services, TemporalLink
from tollgate.http.ratelimit import TenantRateLimiter


async def http_answer(rig: Rig, raw: str, state_dir: Path) -> dict[str, Any]:
    """The HTTP intake's answer to ``raw`` posted by its tenant (no relay runs)."""
    settings = http_settings(rig.database_url, state_dir)
    async with asyncpg.create_pool(rig.database_url, min_size=1, max_size=2) as pool:
        svc = Services(settings=settings, pool=pool, tenant_secrets=TENANT_SECRETS,
                       limiter=TenantRateLimiter(rate=100, burst=100),
                       temporal=TemporalLink(settings.temporal_address, settings.namespace,
                                             settings.env))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(svc)),
                                     base_url="http://tollgate.test") as api:
            answer: dict[str, Any] = (await post_events(api, raw)).json()
    return answer


@pytest.fixture
async def pool(rig: Rig) -> asyncpg.Pool:
    p = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=2)
    yield p
    await p.close()


async def test_replay_needs_approval_and_runs_at_most_once_per_approval(
    rig: Rig, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fault: an unreconciled write (receipt UNKNOWN, nothing at the target) is dead-lettered;
    the first approved replay does not succeed (deduping target: 429 on all ten tries of the
    resend; non-deduping target: the resend is refused as unsafe).
    Evidence: the replay's resend consumed the ten 429s (ten POSTs) or sent nothing; the replay
    says "stopped"; a second replay is refused until a second approval.
    Invariant: one replay per approval; a deduping target ends with one message, a
    non-deduping one is never sent to blind (no POST at all)."""
    dl_id, key = await seed_unreconciled(rig, pool)
    dedupes = rig.mode == "dedupe"
    # No approval yet: refused (exit 1).
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "customer confirmed nothing arrived") == 0
    if dedupes:
        rig.standins.messaging.inject("rate_limit", key=key, times=10, retry_after=1)
    capsys.readouterr()
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert f"replay 1 of dead letter {dl_id}: stopped" in capsys.readouterr().out
    assert rig.faults_left() == []
    assert (rig.posts(key), rig.messages(key)) == ((10, 0) if dedupes else (0, 0))

    # It stopped again: the dead letter is reopened (OPEN), awaiting a person (ADR 0059).
    assert await pool.fetchval("SELECT status FROM dead_letters WHERE id = $1", dl_id) == "OPEN"
    # The approval is used up by the failed replay: a second one waits for a second approval.
    # Refused until approved again.
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    assert rig.posts(key) == (10 if dedupes else 0)
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "target fixed") == 0
    assert await ops(rig, "dlq", "replay", str(dl_id)) == (
        0 if dedupes else 1)
    receipt = await ReceiptStore(pool).get(key)
    assert receipt is not None
    if dedupes:
        assert receipt.status == ReceiptStatus.SUCCEEDED
        assert (rig.posts(key), rig.messages(key)) == (11, 1)
        # Once the receipt says it happened, a replay sends nothing and closes the letter.
        assert await ops(rig, "dlq", "replay", str(dl_id)) == 0
        assert await ops(rig, "dlq", "approve", str(dl_id),
                         "--reason", "again") == 1  # refused: closed: the action already happened
    else:
        assert receipt.status == ReceiptStatus.UNKNOWN
        assert (rig.posts(key), rig.messages(key)) == (0, 0)
    assert rig.posts(key) == (11 if dedupes else 0)
    row = await pool.fetchrow("SELECT status, replays FROM dead_letters WHERE id = $1", dl_id)
    # Non-deduping: the second replay stopped again too, so its dead letter is reopened and
    # awaits a third approval (ADR 0059).
    assert (row["status"], row["replays"]) == (("CLOSED", 2) if dedupes else ("OPEN", 2))


async def test_replay_of_a_write_the_target_already_holds_finds_it_and_sends_nothing(
    rig: Rig, pool: asyncpg.Pool
) -> None:
    """Fault: the target stored the message but the receipt stayed UNKNOWN and was
    dead-lettered (a 504 after the write that the reconciler never saw settle).
    Evidence: the replay's lookup settled the receipt with the stored message's id; the replay
    ended found_at_target.
    Invariant: the replay sends nothing (the one POST is the original), one message."""
    dl_id, key = await seed_unreconciled(rig, pool, stored_at_target=True)
    assert (rig.posts(key), rig.messages(key)) == (1, 1)
    assert await ops(rig, "dlq", "approve", str(dl_id),
                     "--reason", "retry") == 0
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 0
    replay = rig.client.get_workflow_handle(f"reconcile/{key}/replay-1",
                                            result_type=ReconcileResult)
    result = await replay.result()
    assert (result.status, result.reason_code) == ("succeeded", "found_at_target")
    receipt = await ReceiptStore(pool).get(key)
    stored = rig.standins.messaging.get_by_key(key)
    assert receipt is not None and stored is not None
    assert (receipt.status, receipt.external_id) == (ReceiptStatus.SUCCEEDED, stored["id"])
    assert (rig.posts(key), rig.messages(key)) == (1, 1)


@pytest.mark.parametrize("lookup_window_s", [2.0])  # the target's: the reconciler's window
async def test_a_replay_that_settles_the_reconcilers_dead_letter_ends_the_event_as_its_receipt(
    rig: Rig, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Fault: the target answers 504 to the send (and, deduping, to the reconciler's one
    resend) and stores nothing: the reconciler dead-letters the write and the event's run
    completes STOPPED (unreconciled_write), its receipt UNKNOWN. Then the write is settled by
    the dead letter's approved replay: no_dedupe: the message surfaced at the target late and
    the replay's lookup finds it; dedupe: the replay's one resend is refused by the target.
    Evidence: the receipt SUCCEEDED (found) or REJECTED (refused) by that replay.
    Invariant: the event's record follows its receipt (ADR 0061): one more numbered transition
    STOPPED -> SUCCEEDED or REJECTED by the operator who replayed, naming the replay, shown by
    `ops state` and `review show` though the run completed STOPPED; the audit chain intact. It
    used to stay STOPPED (unreconciled_write) beside a settled receipt. The producer's repeat
    of the event (`tollgate submit`) is answered with that end too (ADR 0062): it used to name
    the run's result, STOPPED."""
    dedupes = rig.mode == "dedupe"
    event_key = fresh_key("r")
    key = send_key(event_key)
    rig.standins.messaging.inject("gateway_timeout", key=key, times=2 if dedupes else 1)
    raw = signed_event(rig.customer(), key=event_key)
    ack = await rig.submit(raw)
    await rig.approve(ack.workflow_id)
    outcome = await rig.outcome(ack.workflow_id, within=90)
    wid = ack.workflow_id
    assert (outcome.state, outcome.reason_code) == (EventState.STOPPED, "unreconciled_write")
    assert rig.faults_left() == [] and rig.messages(key) == 0
    [letter] = await rig.sql("SELECT id FROM dead_letters WHERE workflow_id = $1", wid)
    [before] = await rig.sql("SELECT last_seq FROM events WHERE workflow_id = $1", wid)
    if dedupes:
        rig.standins.messaging.inject("reject", key=key, code="number_blocked")
    else:
        target = MessagingHttpAdapter(rig.standins.messaging_url)
        try:
            [request] = await rig.sql("SELECT replay_input FROM dead_letters WHERE id = $1",
                                      letter["id"])
            await target.execute(ReconcileRequest.model_validate_json(
                request["replay_input"]).action)
        finally:
            await target.aclose()
    posts = rig.posts(key)
    assert await ops(rig, "dlq", "approve", str(letter["id"]), "--reason", "checked") == 0
    assert await ops(rig, "dlq", "replay", str(letter["id"])) == (1 if dedupes else 0)
    status, to_state, how = (("REJECTED", "REJECTED", "resent") if dedupes else
                             ("SUCCEEDED", "SUCCEEDED", "found at the target"))
    [receipt] = await rig.sql("SELECT status FROM receipts WHERE action_key = $1", key)
    assert receipt["status"] == status
    assert rig.posts(key) == posts + (1 if dedupes else 0)
    assert rig.messages(key) == (0 if dedupes else 1)
    [event] = await rig.sql("SELECT state, reason_code, last_seq, outcome FROM events"
                            " WHERE workflow_id = $1", wid)
    assert (event["state"], event["reason_code"], event["last_seq"]) == (
        to_state, "dead_letter_replayed", before["last_seq"] + 1)
    followed = json.loads(event["outcome"])
    assert (followed["state"], followed["receipt"]["status"]) == (to_state, status)
    [last] = await rig.sql("SELECT seq, from_state, to_state, actor, reason"
                           " FROM state_transitions WHERE workflow_id = $1"
                           " ORDER BY seq DESC LIMIT 1", wid)
    assert tuple(last) == (
        before["last_seq"] + 1, "STOPPED", to_state, "operator:op.kim",
        f"replay 1 of dead letter {letter['id']}: {how}, receipt {status}")
    handle = rig.client.get_workflow_handle(wid)
    assert (await handle.describe()).status == WorkflowExecutionStatus.COMPLETED
    capsys.readouterr()
    assert await run_ops(["state", wid], rig.settings) == 0
    assert capsys.readouterr().out.strip() == f"{to_state} (dead_letter_replayed)"
    assert await review_show(rig.client, rig.settings, wid) == 0
    assert f"state {to_state} (dead_letter_replayed)" in capsys.readouterr().out
    assert await run_ops(["audit", "--verify"], rig.settings) == 0
    # The producer sends the event again: answered at once with the recorded end.
    again = tmp_path / "again.json"
    again.write_text(raw)
    capsys.readouterr()
    code, text = await said_by(capsys, rig.settings, submit_command, str(again))
    assert (code, text.strip()) == (
        0, f"duplicate {wid} (earlier outcome: {to_state} (dead_letter_replayed))"), text
    code, text = await said_by(capsys, rig.settings, submit_command, "--json", str(again))
    answer = json.loads(text)
    assert (answer["status"], answer["state"], answer["previous"]["reason_code"],
            answer["previous"]["receipt"]["status"]) == (
        "duplicate", to_state, "dead_letter_replayed", status), text
    # Over HTTP too (answered from PostgreSQL's row, as it always was).
    (tmp_path / "http").mkdir()
    answer = await http_answer(rig, raw, tmp_path / "http")
    assert (answer["status"], answer["state"], answer["previous"]["reason_code"]) == (
        "duplicate", to_state, "dead_letter_replayed"), answer

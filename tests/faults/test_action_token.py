"""The action token on the whole stack (issue 27, item 2; ADR 0027), against a deduping and a
non-deduping target: a send the token does not cover sends nothing and ends in a dead letter
that names why.

Each fault needs a moment between the approval and the send, and gets it the way production
does: a kill switch closed before the approval holds the send; the fault is laid in while it
is held; reopening the switch (and the wake it sends) lets the send step look again.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import asyncpg
import pytest
from temporalio.api.enums.v1 import EventType

from adapters.postgres.ops import OpsStore
from contracts import EventState
from contracts.actions import WakeUp
from tests.conftest import fresh_key, signed_event
from tests.eventually import eventually
from tests.faults.conftest import Rig, send_key
from tests.faults.step_failures_support import dead_lettered_from_executing


async def held_send(rig: Rig, db: asyncpg.Pool) -> tuple[str, str]:
    """(workflow id, event key) of an approved event whose send a kill switch holds."""
    await OpsStore(db).set_switch(adapter="messaging", tenant_id="acme", closed=True,
                                  reason="token drill", actor="test")
    key = fresh_key("tok")
    ack = await rig.submit(signed_event(rig.customer(), key=key))
    await rig.approve(ack.workflow_id)

    async def held() -> bool:
        results = [a.result for a in await rig.attempts(ack.workflow_id, "execute_action")]
        return any(r is not None and r["status"] == "held" for r in results)

    await eventually(held, f"{ack.workflow_id}: the send held by the switch")
    return ack.workflow_id, key


async def release(rig: Rig, db: asyncpg.Pool, workflow_id: str) -> None:
    await OpsStore(db).set_switch(adapter="messaging", tenant_id="acme", closed=False,
                                  reason="drill over", actor="test")
    await rig.client.get_workflow_handle(workflow_id).signal("wake", WakeUp(cause="test"))


async def token_claims(rig: Rig, workflow_id: str) -> dict[str, Any]:
    """The claims of the token the held send carries, read from the send's input in history."""
    history = await rig.client.get_workflow_handle(workflow_id).fetch_history()
    for event in history.events:
        attrs = event.activity_task_scheduled_event_attributes
        if (event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
                and attrs.activity_type.name == "execute_action"):
            request = (await rig.client.data_converter.decode(attrs.input.payloads))[0]
            claims = request["action_token"].partition(".")[0]
            return dict(json.loads(base64.urlsafe_b64decode(claims + "=" * (-len(claims) % 4))))
    raise AssertionError(f"{workflow_id}: no send scheduled")


async def dead_lettered_with(rig: Rig, workflow_id: str, key: str, code: str) -> None:
    outcome = await rig.outcome(workflow_id)
    assert (outcome.state, outcome.reason_code) == (EventState.DEAD_LETTERED, code)
    assert rig.posts(send_key(key)) == 0  # nothing reached the target
    rows = await rig.sql("SELECT error_code FROM dead_letters WHERE workflow_id = $1",
                         workflow_id)
    assert [r["error_code"] for r in rows] == [code]
    # The send step refused before its receipt: its EXECUTING came with the dead letter.
    await dead_lettered_from_executing(rig.sql, rig.client.get_workflow_handle(workflow_id),
                                       code)


async def test_a_draft_altered_in_postgresql_after_approval_sends_nothing(
        rig: Rig, db: asyncpg.Pool) -> None:
    workflow_id, key = await held_send(rig, db)
    await rig.sql("UPDATE drafts SET draft = jsonb_set(draft, '{message}', to_jsonb($2::text))"
                  " WHERE workflow_id = $1", workflow_id, "Pay the overdue bill at evil.example")
    await release(rig, db, workflow_id)
    await dead_lettered_with(rig, workflow_id, key, "action_token_content_changed")


async def test_a_token_another_send_already_used_sends_nothing(
        rig: Rig, db: asyncpg.Pool) -> None:
    workflow_id, key = await held_send(rig, db)
    claims = await token_claims(rig, workflow_id)
    await rig.sql("INSERT INTO action_token_uses (token_id, action_key, use_id)"
                  " VALUES ($1, $2, 'event/acme/elsewhere/9')", claims["jti"], claims["act"])
    await release(rig, db, workflow_id)
    await dead_lettered_with(rig, workflow_id, key, "action_token_replayed")


@pytest.mark.parametrize("rig_env", [{"TOLLGATE_ACTION_TOKEN_TTL_SECONDS": "2"}])
async def test_a_send_held_past_its_tokens_life_goes_out_once_on_a_fresh_token(
        rig: Rig, db: asyncpg.Pool) -> None:
    """A kill switch may hold an approved send for days (issue 26): the approval still stands,
    so the run mints its token again after the hold, for the same approval and the same use.
    (A token presented after its expiry is refused: tests/policies/test_action_token.py.)"""
    workflow_id, key = await held_send(rig, db)
    first = await token_claims(rig, workflow_id)
    await eventually(lambda: datetime.now(UTC).timestamp() > first["exp"] + 1,
                     "the action token's expiry passed")
    await release(rig, db, workflow_id)
    outcome = await rig.outcome(workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert rig.messages(send_key(key)) == 1
    rows = await rig.sql("SELECT token_id FROM action_token_uses WHERE action_key = $1",
                         send_key(key))
    assert [r["token_id"] for r in rows] == [first["jti"]]  # one approval, one use


async def test_the_approved_send_goes_out_once_with_its_token(
        rig: Rig, db: asyncpg.Pool) -> None:
    """The control: held and released untouched, the same send goes out, once."""
    workflow_id, key = await held_send(rig, db)
    await release(rig, db, workflow_id)
    outcome = await rig.outcome(workflow_id)
    assert outcome.state == EventState.SUCCEEDED
    assert rig.messages(send_key(key)) == 1
    rows = await rig.sql("SELECT use_id FROM action_token_uses WHERE action_key = $1",
                         send_key(key))
    assert len(rows) == 1 and rows[0]["use_id"].startswith(f"{workflow_id}/")

"""A replay whose one resend is refused (ADR 0066): the replay run writes the refusal's own
dead letter (``no_consent_at_send`` here: consent revoked since the dead letter), and the
replayed ``unreconciled_write`` one is closed by ``reconciler`` in the same transaction,
naming the newer one. Before, it stayed REPLAYED beside the refusal's OPEN dead letter: one
write, two dead letters, one of them in no operator queue."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import asyncpg
import pytest

from adapters.postgres.receipts import AWAITING_A_PERSON_SQL, MOVED_ASIDE_SQL
from tests.faults.conftest import Rig
from tests.faults.dead_letters_support import (
    ops,
    seed_unreconciled,
)


@pytest.fixture
async def pool(rig: Rig) -> AsyncIterator[asyncpg.Pool]:
    p = await asyncpg.create_pool(rig.database_url, min_size=1, max_size=2)
    yield p
    await p.close()


@pytest.mark.parametrize("target_mode", ["dedupe"], indirect=True)
async def test_a_replay_refused_its_resend_leaves_one_dead_letter_waiting(
        rig: Rig, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str]) -> None:
    dl_id, key = await seed_unreconciled(rig, pool)
    [row] = await rig.sql("SELECT workflow_id, replay_input FROM dead_letters WHERE id = $1",
                          dl_id)
    customer = json.loads(row["replay_input"])["ref"]["entity_id"]
    rig.standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                            consent_messaging=False)
    assert await ops(rig, "dlq", "approve", str(dl_id), "--reason", "target back") == 0
    capsys.readouterr()
    assert await ops(rig, "dlq", "replay", str(dl_id)) == 1
    said = capsys.readouterr().out.strip().splitlines()[-1]  # after the worker's logs
    assert (rig.posts(key), rig.messages(key)) == (0, 0)  # nothing resent

    letters = await rig.sql(
        "SELECT id, error_code, status, closed_by, closed_reason FROM dead_letters"
        " WHERE action_key = $1 ORDER BY id", key)
    newer = letters[1]["id"]
    assert [tuple(r.values()) for r in letters] == [
        (dl_id, "unreconciled_write", "CLOSED", "reconciler",
         f"replay 1 had its resend refused: superseded by dead letter {newer} "
         "(no_consent_at_send), which holds the write now"),
        (newer, "no_consent_at_send", "OPEN", None, None)]
    assert said == (f"replay 1 of dead letter {dl_id}: stopped, no receipt; dead letter "
                    f"{dl_id} closed: {letters[0]['closed_reason']}")
    audit = await rig.sql("SELECT actor, action FROM audit WHERE target = $1 ORDER BY id",
                          f"dead_letter/{dl_id}")
    assert [tuple(r.values()) for r in audit] == [
        ("op.kim", "dlq_approve"), ("op.kim", "dlq_replay"), ("reconciler", "dlq_close"),
        ("op.kim", "dlq_replay_result")]
    # One write, one dead letter in the queue (the refusal's), its write moved aside to it:
    # counted there by `ops status`, not as an open unknown write, and left by the sweep.
    [write] = await rig.sql(f"SELECT status, {MOVED_ASIDE_SQL} AS aside,"
                            f" {AWAITING_A_PERSON_SQL} AS waiting FROM receipts r"
                            " WHERE action_key = $1", key)
    assert tuple(write.values()) == ("UNKNOWN", True, True)
    # The closed one is not approved again.
    assert await ops(rig, "dlq", "approve", str(dl_id), "--reason", "again") == 1

"""The circuit on monitor thresholds (issue 11): a target answering 504 after storing every
write closes the messaging switch for the tenant by itself once the policy's limit of unknown
writes is reached; the next approved event is held and sends nothing, and goes out after an
operator's canary reopening. The target dedupes by key (the stand-in's default); the fault
resolves by lookup either way, so the mode does not change what the circuit sees."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client

import activities.circuit
from contracts import EventState
from contracts.policy import CircuitLimits
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE, signed_event
from tests.eventually import eventually
from tests.faults.conftest import send_key
from tests.faults.kill_switch_support import approved, customer, held_and_waiting, new_key, sent
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns


async def test_unknown_writes_past_the_limit_close_the_switch_until_a_canary_reopening(
    worker_client: tuple[Client, str], standins: StandIns, db: asyncpg.Pool,
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, database_url: str,
) -> None:
    """Fault: two sends each stored by the target, then answered 504 (limit: 2 unknown writes).
    Evidence: both reconcile to one message each; the switch messaging/acme is closed by
    "circuit" with an audit row naming the rule and the figures.
    Invariant: a third approved event is held with no POST; after `ops reopen --canary 1` it
    is sent once and succeeds."""
    client, queue = worker_client
    monkeypatch.setattr(activities.circuit, "DEFAULT_LIMITS", CircuitLimits(unknown_writes=2))
    for _ in range(2):
        key = new_key()
        standins.messaging.inject("fail_after_write", key=send_key(key))
        handle = await approved(client, queue, signed_event(customer(standins), key=key))
        outcome = await handle.result()
        assert outcome.state == EventState.SUCCEEDED
        assert sent(standins, send_key(key)) == (1, 1)

    switch = await db.fetchrow("SELECT closed, changed_by, reason FROM kill_switches"
                               " WHERE adapter = 'messaging' AND tenant_id = 'acme'")
    assert switch is not None and switch["closed"] and switch["changed_by"] == "circuit"
    assert switch["reason"] == "unknown_writes: 2 in 15 min (limit 2)"
    audit = await db.fetch("SELECT detail FROM audit WHERE actor = 'circuit' ORDER BY id DESC"
                           " LIMIT 1")
    detail = json.loads(audit[0]["detail"])
    assert (detail["rule"], detail["count"], detail["limit"], detail["window_seconds"]) == (
        "unknown_writes", 2, 2, 900)

    held_key = new_key()
    handle = await approved(client, queue, signed_event(customer(standins), key=held_key))
    await eventually(lambda: held_and_waiting(client, handle), "the third send held")
    assert sent(standins, send_key(held_key)) == (0, 0)

    settings = Settings.from_env({"DATABASE_URL": database_url,
                                  "TOLLGATE_STATE_DIR": str(tmp_path),
                                  "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})
    assert await run_ops(["reopen", "--adapter", "messaging", "--tenant", "acme",
                          "--root-cause", "target answered 504 after writing",
                          "--fixture", "test_circuit", "--canary", "1"], settings,
                         role="change_owner") == 0
    outcome = await handle.result()
    assert outcome.state == EventState.SUCCEEDED
    assert sent(standins, send_key(held_key)) == (1, 1)

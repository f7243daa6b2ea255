"""A send held by a closed kill switch, through a real worker: `ops status` counts it under the
switch that holds it and `tollgate trace` says it is held, by what, since when and what wakes
it; once the switch reopens and the send goes, both stop showing it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.postgres.ops import OpsStore
from adapters.postgres.status import StatusStore
from contracts import EventState
from tests.cli.trace_support import run_trace
from tests.conftest import fresh_key, signed_event, worker_settings
from tests.eventually import eventually
from tests.faults.kill_switch_support import approved, customer, held_and_waiting
from tests.faults.kill_switch_support import ops as ops
from tollgate.dev.standins import StandIns


async def holds(pool: asyncpg.Pool) -> dict[str, int]:
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    return {h["held_by"]: h["runs"] for h in snap["holds"]}


async def test_a_held_send_shows_in_status_and_trace_until_it_goes(
    worker_client: tuple[Client, str], env: WorkflowEnvironment, database_url: str,
    standins: StandIns, ops: OpsStore, pool: asyncpg.Pool, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, queue = worker_client
    settings = worker_settings(database_url, standins, tmp_path, queue,
                               TEMPORAL_ADDRESS=env.client.service_client.config.target_host)
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 7", actor="op.kim")
    held = await approved(client, queue, signed_event(customer(standins),
                                                      key=fresh_key("hs")))
    await eventually(lambda: held_and_waiting(client, held), "a held send and its re-check")

    assert (await eventually(lambda: holds(pool), "the hold in ops status")
            == {"kill_switch:messaging/acme": 1})
    assert await run_trace(settings, held.id) == 0
    text = capsys.readouterr().out
    assert f"{held.id}  APPROVED" in text
    line = next(x for x in text.splitlines() if x.startswith("  held "))
    assert line.startswith("  held      by kill_switch:messaging/acme since ")
    assert "wakes on tollgate ops reopen --adapter messaging --tenant 'acme'" in line

    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")
    assert (await held.result()).state == EventState.SUCCEEDED
    assert await holds(pool) == {}
    assert await run_trace(settings, held.id) == 0
    assert "  held " not in capsys.readouterr().out

"""What `tollgate chaos` does besides the schedule: the on-call operator, and run tags that do
not look like personal data (docs/reliability.md)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Protocol

import asyncpg

from adapters.postgres.ops import OpsStore

#: How often the run's operator looks for a kill switch the circuit closed, and how long one
#: look may take before it is given up and the connection replaced.
OPERATOR_EVERY_S = 2.0
OPERATOR_PATIENCE_S = 10.0


class _Stack(Protocol):
    database_url: str | None


class _Tally(Protocol):
    reopened: int


async def on_call(stack: _Stack, tally: _Tally) -> None:
    """The on-call operator: the schedule's unknown writes are meant to trip the circuit
    (docs/metrics.md), which closes the target's switch and holds every later send; the
    operator reopens it, audited, as the runbook says, and the held sends go on. Runs until
    cancelled; each reopening is counted on ``tally.reopened``."""
    assert stack.database_url is not None
    pool: asyncpg.Pool | None = None
    try:
        while True:
            await asyncio.sleep(OPERATOR_EVERY_S)
            try:
                # Bounded: a call that never returns (a connection the restart left half-open)
                # must not stop the operator for the rest of the run (seed 34 at 1632276).
                async with asyncio.timeout(OPERATOR_PATIENCE_S):
                    pool = pool or await asyncpg.create_pool(stack.database_url, min_size=1,
                                                             max_size=1)
                    ops = OpsStore(pool)
                    for row in await ops.switches():
                        if row["closed"]:
                            await ops.set_switch(
                                adapter=row["adapter"], tenant_id=row["tenant_id"],
                                closed=False, actor="chaos-operator",
                                reason="chaos run: reopened after the circuit closed")
                            tally.reopened += 1
            except Exception:  # the operator outlives whatever one look met
                # PostgreSQL being restarted by the schedule, a call that timed out, or an
                # error the driver did not foresee: start again on a new pool.
                if pool is not None:
                    pool.terminate()
                    pool = None
    finally:
        if pool is not None:
            pool.terminate()


def letters_tag(now: datetime) -> str:
    """The run's tag in event keys, in letters: a run of digits in a key reads as a phone
    number to intake's personal-data check, which rightly quarantines such a key."""
    return "".join(chr(ord("a") + int(d)) for d in now.strftime("%H%M%S"))

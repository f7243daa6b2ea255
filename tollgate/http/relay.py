"""The outbox relay: unsent rows into Temporal, oldest first, at a bounded rate.

Each row goes through ``tollgate.intake.submit.submit`` (update-with-start on the same workflow id a
producer using the CLI would get), so a row sent twice (a crash between start and mark) is
answered as a duplicate by Temporal and never makes a second workflow. While Temporal is
unreachable the row stays unsent and the relay backs off; afterwards it drains the backlog in
order.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog

from adapters.postgres.outbox import OutboxStore
from tollgate.http.deps import TemporalLink
from tollgate.intake import submit as intake

log = structlog.get_logger("tollgate.relay")

#: One delivery (an update-with-start that waits for validation) may take this long.
SEND_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class RelayPolicy:
    rate: float = 50.0  # rows per second at most, all senders together
    #: Rows in flight at once. One keeps strict oldest-first order, which the intake needs:
    #: an older event for an entity started after a newer one is SUPERSEDED, not processed.
    senders: int = 1
    idle_s: float = 0.2  # pause when the outbox is empty
    backoff_s: float = 0.5  # first pause after a failed send, doubled up to max_backoff_s
    max_backoff_s: float = 10.0


async def relay_once(outbox: OutboxStore, temporal: TemporalLink, task_queue: str) -> bool | None:
    """Send the oldest unsent row. True: sent; False: it failed (left unsent); None: none left."""
    async with outbox.next_unsent() as (row, settle):
        if row is None:
            return None
        try:
            client = await temporal.client()
            ack = await asyncio.wait_for(
                intake.submit(client, row.raw, task_queue=task_queue), SEND_TIMEOUT_S)
        except Exception as exc:  # any failure leaves the row unsent, for the next pass
            temporal.forget()
            await settle.failed(type(exc).__name__)
            log.warning("relay_send_failed", outbox_id=row.id, attempts=row.attempts + 1,
                        error=type(exc).__name__)
            return False
        await settle.sent(ack.status)
        log.info("relay_sent", outbox_id=row.id, workflow_id=ack.workflow_id, status=ack.status)
        return True


async def run_relay(outbox: OutboxStore, temporal: TemporalLink, task_queue: str,
                    policy: RelayPolicy | None = None) -> None:
    """Run until cancelled: ``policy.senders`` loops, each taking the oldest row nobody holds
    (so the backlog drains oldest first, a few at a time)."""
    policy = policy or RelayPolicy()
    async with asyncio.TaskGroup() as group:
        for _ in range(policy.senders):
            group.create_task(_send_loop(outbox, temporal, task_queue, policy))


async def _send_loop(outbox: OutboxStore, temporal: TemporalLink, task_queue: str,
                     policy: RelayPolicy) -> None:
    backoff = policy.backoff_s
    while True:
        try:
            sent = await relay_once(outbox, temporal, task_queue)
        except Exception as exc:  # PostgreSQL itself is away: the loop must outlive it
            log.warning("relay_store_unreachable", error=type(exc).__name__)
            sent = False
        if sent is None:
            await asyncio.sleep(policy.idle_s)
        elif sent:
            backoff = policy.backoff_s
            await asyncio.sleep(policy.senders / policy.rate)
        else:
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, policy.max_backoff_s)

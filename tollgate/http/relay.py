"""The outbox relay: live rows into Temporal, oldest first per tenant and entity, at a bounded rate.

Each row goes through ``tollgate.intake.submit.submit`` (update-with-start on the same workflow id a
producer using the CLI would get), so a row sent twice (a crash between start and mark) is
answered as a duplicate by Temporal and never makes a second workflow. While Temporal is
unreachable the row stays unsent, no try is counted, and the relay backs off; afterwards it
drains the backlog in order.

Any other failure is the row's own (it cannot be encoded, Temporal refuses it, or its workflow
keeps failing on it): the row is tried again after its own backoff, ``MAX_DELIVERY_ATTEMPTS``
times at most, and then moved aside for an operator (``tollgate ops outbox``, docs/runbook.md).
Meanwhile the relay goes on with every other row: order is kept only per tenant and entity, so
a stuck row holds back only the later rows of its own entity (ADR 0030).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import structlog
from fastapi import HTTPException
from temporalio.client import Client
from temporalio.service import RPCError

from adapters.broker.cancel import raise_if_cancel_pending, raise_if_cancelled, within
from adapters.postgres.outbox import OutboxStore
from contracts import IntakeAck
from tollgate.config.service import HttpSettings
from tollgate.http.deps import TemporalLink
from tollgate.intake import submit as intake
from tollgate.intake.reach import unreachable_status, why_not_taking
from tollgate.intake.recorded import RecordedEnd, recorded_ends

log = structlog.get_logger("tollgate.relay")

#: One delivery (an update-with-start that waits for validation) may take this long by
#: default (``TOLLGATE_RELAY_SEND_TIMEOUT_S``).
SEND_TIMEOUT_S = 15.0
#: Tries of one row (each failing for a reason of its own) before it is moved aside.
MAX_DELIVERY_ATTEMPTS = 5


@dataclass(frozen=True)
class RelayPolicy:
    rate: float = 50.0  # rows per second at most, all senders together
    #: Rows in flight at once. Rows of one tenant and entity never are (the store hands out a
    #: row only once every older live row of its entity is settled), since an older event for
    #: an entity started after a newer one is SUPERSEDED, not processed; two senders keep a
    #: row that times out from holding everyone else for the length of the timeout.
    senders: int = 2
    idle_s: float = 0.2  # pause when the outbox is empty
    backoff_s: float = 0.5  # first pause after a failed send, doubled up to max_backoff_s
    max_backoff_s: float = 10.0
    max_attempts: int = MAX_DELIVERY_ATTEMPTS
    send_timeout_s: float = SEND_TIMEOUT_S

    @classmethod
    def from_settings(cls, http: HttpSettings) -> RelayPolicy:
        """The policy ``tollgate serve`` (and ``tollgate dev``) runs the relay with."""
        return cls(rate=http.relay_rate, send_timeout_s=http.relay_send_timeout_s)


class Unreachable(Exception):
    """Temporal could not be reached for this send: the only failure that is not the row's."""


async def relay_once(outbox: OutboxStore, temporal: TemporalLink, task_queue: str,
                     policy: RelayPolicy | None = None) -> bool | None:
    """Send the next live row. True: sent, or failed for a reason of its own (tried again later,
    or moved aside): the relay goes straight on. False: Temporal is unreachable (back off).
    None: no row is due."""
    policy = policy or RelayPolicy()
    async with outbox.next_unsent() as (row, settle):
        if row is None:
            return None
        try:
            try:
                client = await temporal.client()
            except HTTPException as exc:
                raise Unreachable("connect") from exc
            ack = await _send(client, row.raw, task_queue, recorded_ends(outbox.pool),
                              timeout_s=policy.send_timeout_s)
        except Unreachable as exc:
            temporal.forget()
            await settle.unreachable(f"unreachable:{exc}")
            log.warning("relay_temporal_unreachable", outbox_id=row.id, error=str(exc))
            return False
        except Exception as exc:  # the row's own failure: counted, then moved aside
            code = _error_code(exc)
            retry_in = min(policy.backoff_s * 2 ** row.attempts, policy.max_backoff_s)
            parked = await settle.failed(code, retry_in_s=retry_in,
                                         park_after=policy.max_attempts)
            log.warning("relay_moved_aside" if parked else "relay_send_failed",
                        outbox_id=row.id, attempts=row.attempts + 1, error=code)
            return True
        await settle.sent(ack.status)
        log.info("relay_sent", outbox_id=row.id, workflow_id=ack.workflow_id, status=ack.status)
        return True


async def _send(client: Client, raw: str, task_queue: str,
                recorded: RecordedEnd | None = None, *,
                timeout_s: float = SEND_TIMEOUT_S) -> IntakeAck:
    # Whether a failure is an outage or the row's own is the intake's shared rule
    # (tollgate/intake/reach.py), read here exactly as the Redis stream consumer reads it.
    try:
        return await within(
            intake.submit(client, raw, task_queue=task_queue, recorded=recorded),
            timeout_s)
    except TimeoutError:
        # Nobody answered the update in time: with a worker polling, it is stuck on this row
        # (its workflow keeps failing on it); without one, it is an outage.
        why = await why_not_taking(client, task_queue)
        if why is None:
            raise
        raise Unreachable(why) from None
    except RPCError as exc:
        if (status := unreachable_status(exc)) is not None:
            raise Unreachable(status) from exc
        raise


def _error_code(exc: BaseException) -> str:
    """What the row keeps of a failure: the class and the RPC status, never a message (which
    may quote the payload)."""
    if isinstance(exc, RPCError):
        return f"{type(exc).__name__}:{exc.status.name}"
    return type(exc).__name__


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
        raise_if_cancel_pending()  # a cancel a library swallowed (adapters/broker/cancel.py)
        try:
            sent = await relay_once(outbox, temporal, task_queue, policy)
        except Exception as exc:  # PostgreSQL itself is away: the loop must outlive it
            raise_if_cancelled(exc)  # ... unless it is this loop's cancel in a library's guise
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

"""Does a worker poll the task queue? Nothing else on ``tollgate ops status`` can tell: runs
with no worker simply stop moving, and PostgreSQL shows them where they stopped. The screen asks
Temporal once, briefly, the question the outbox relay and the stream consumer ask before they
call a delivery an outage (``tollgate.intake.reach.why_not_taking``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Final

from tollgate.config.settings import Settings

if TYPE_CHECKING:
    from temporalio.client import Client

#: Long enough for a loaded server, short enough for a status screen.
PROBE_TIMEOUT_S: Final = 2.0
#: One client per server for the process: `ops status --watch` probes on every refresh.
_clients: dict[tuple[str, str], Client] = {}


async def probe_workers(s: Settings) -> dict[str, Any]:
    """``{"task_queue", "state", "detail"}``: state ``ok`` (a worker polls), ``no worker``,
    or ``unreachable`` (Temporal did not answer in time: the screen still answers from
    PostgreSQL, and says so; like no worker, a reason for exit 6 while events are open)."""
    from tollgate.codec.payload import new_key_ring
    from tollgate.intake.reach import why_not_taking
    from tollgate.runtime.client import build_client

    found: dict[str, Any] = {"task_queue": s.task_queue, "state": "unreachable", "detail": None}
    try:
        # A throwaway key ring: the question carries no payload, and the screen must not need
        # the payload keys to say whether workers run.
        client = _clients.get((s.temporal_address, s.namespace))
        if client is None:
            client = await asyncio.wait_for(
                build_client(s.temporal_address, s.namespace, keys=new_key_ring(), env=s.env),
                PROBE_TIMEOUT_S)
            _clients[(s.temporal_address, s.namespace)] = client
        why = await asyncio.wait_for(why_not_taking(client, s.task_queue), PROBE_TIMEOUT_S)
    except (TimeoutError, RuntimeError, OSError):
        found["detail"] = f"Temporal at {s.temporal_address}"
        return found
    if why is None:
        found["state"] = "ok"
    elif why == "no_worker":
        found["state"] = "no worker"
    else:
        found["detail"] = why
    return found

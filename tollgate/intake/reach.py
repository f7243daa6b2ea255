"""Is Temporal there to take events? The one failure of a delivery that is never the event's
fault (issue 25): the outbox relay (``tollgate/http/relay.py``) and the Redis stream consumer
(``tollgate/intake/redis_stream.py``) read it the same way.

- an RPC answered ``UNAVAILABLE``: the server (or the way to it) is down;
- an intake nobody answered in time while no worker polls the task queue: nobody could take it.

Anything else (a refusal, an intake that times out while workers poll) is the event's own.
"""

from __future__ import annotations

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

#: A probe is one short RPC, not retried by the SDK.
PROBE_TIMEOUT_S = 5.0


def unreachable_status(exc: BaseException) -> str | None:
    """The RPC status name when ``exc`` says the server cannot be reached, else None."""
    if isinstance(exc, RPCError) and exc.status == RPCStatusCode.UNAVAILABLE:
        return exc.status.name
    return None


async def takes_events(client: Client, task_queue: str) -> bool:
    """True when the server answers and a worker polls ``task_queue``."""
    return await why_not_taking(client, task_queue) is None


async def why_not_taking(client: Client, task_queue: str) -> str | None:
    """None when the server answers and a worker polls ``task_queue``; else why not, as a code
    a log line or a row may keep: the probe's RPC status name, or ``no_worker``. A server that
    does not implement the question (the SDK's time-skipping test server) answered: None."""
    from datetime import timedelta

    request = DescribeTaskQueueRequest(
        namespace=client.namespace, task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)
    try:
        found = await client.workflow_service.describe_task_queue(
            request, timeout=timedelta(seconds=PROBE_TIMEOUT_S))
    except RPCError as exc:
        return None if exc.status == RPCStatusCode.UNIMPLEMENTED else exc.status.name
    return None if found.pollers else "no_worker"

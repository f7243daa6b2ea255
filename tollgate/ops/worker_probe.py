"""Does a worker poll the task queue? Nothing else on ``tollgate ops status`` can tell: runs
with no worker simply stop moving, and PostgreSQL shows them where they stopped. The screen asks
Temporal once, briefly, the question the outbox relay and the stream consumer ask before they
call a delivery an outage (``tollgate.intake.reach.why_not_taking``).

A failed probe says what failed, since each has its own fix: no answer (``unreachable``: start
Temporal, or fix TEMPORAL_ADDRESS), this terminal turned away (``refused``: its credentials or
their rights), a namespace the server does not have (``no namespace``: TEMPORAL_NAMESPACE), or
another error status (``failing``). The SDK's connect reports a refused first call as a
``RuntimeError`` whose text holds the gRPC status; a later call as an ``RPCError``."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

from adapters.broker.cancel import within
from tollgate.config.settings import Settings

if TYPE_CHECKING:
    from temporalio.client import Client

#: Long enough for a loaded server, short enough for a status screen.
PROBE_TIMEOUT_S: Final = 2.0
#: One client per server for the process: `ops status --watch` probes on every refresh.
_clients: dict[tuple[str, str], Client] = {}


#: gRPC statuses that mean the server answered and turned this terminal away.
REFUSED: Final = frozenset({"PERMISSION_DENIED", "UNAUTHENTICATED"})
#: Statuses that mean nothing useful came back from the server.
SILENT: Final = frozenset({"UNAVAILABLE", "DEADLINE_EXCEEDED", "CANCELLED"})
#: The status in the SDK's connect error: ``... Status { code: PermissionDenied, ...``.
_CONNECT_STATUS = re.compile(r"Status \{ code: ([A-Za-z]+)")


def connect_status(exc: BaseException) -> str | None:
    """The gRPC status name (``PERMISSION_DENIED``) a failed connect names, else None (no
    answer at all: refused connection, TLS, timeout)."""
    found = _CONNECT_STATUS.search(str(exc))
    return re.sub(r"(?<!^)(?=[A-Z])", "_", found[1]).upper() if found else None


def failed(s: Settings, code: str | None) -> tuple[str, str]:
    """The probe's state and detail for a failure with the gRPC status ``code`` (None: no
    answer at all)."""
    where = f"Temporal at {s.temporal_address}"
    if code is None:
        return "unreachable", where
    if code in SILENT:
        return "unreachable", f"{where} ({code})"
    if code in REFUSED:
        return "refused", f"{where} said {code} for namespace {s.namespace}"
    if code == "NOT_FOUND":  # the only thing the probe names is the namespace
        return "no namespace", f"{where} has no namespace {s.namespace}"
    return "failing", f"{where} said {code}"


async def probe_workers(s: Settings) -> dict[str, Any]:
    """``{"task_queue", "namespace", "state", "detail"}``: state ``ok`` (a worker polls), ``no
    worker``, or why Temporal could not be asked: ``unreachable`` (no answer in time),
    ``refused`` (PERMISSION_DENIED, UNAUTHENTICATED), ``no namespace`` or ``failing`` (another
    status), with the detail naming the server and the status. The screen still answers from
    PostgreSQL; each of these, like no worker, is a reason for exit 6 while events are open."""
    from tollgate.codec.keyring import new_key_ring
    from tollgate.intake.reach import why_not_taking
    from tollgate.runtime.client import build_client

    found: dict[str, Any] = {"task_queue": s.task_queue, "namespace": s.namespace,
                             "state": "ok", "detail": None}
    try:
        # A throwaway key ring: the question carries no payload, and the screen must not need
        # the payload keys to say whether workers run.
        client = _clients.get((s.temporal_address, s.namespace))
        if client is None:
            client = await within(
                build_client(s.temporal_address, s.namespace, keys=new_key_ring(), env=s.env),
                PROBE_TIMEOUT_S)
            _clients[(s.temporal_address, s.namespace)] = client
        why = await within(why_not_taking(client, s.task_queue), PROBE_TIMEOUT_S)
    except TimeoutError:
        why = None
        found["state"], found["detail"] = failed(s, None)
    except (RuntimeError, OSError) as exc:
        why = None
        found["state"], found["detail"] = failed(s, connect_status(exc))
    if why == "no_worker":
        found["state"] = "no worker"
    elif why is not None:
        found["state"], found["detail"] = failed(s, why)
    return found


async def probe_target_queues(s: Settings, workers: dict[str, Any]) -> list[dict[str, Any]]:
    """``tollgate.ops.target_queues.probe_targets`` with the client ``probe_workers`` made;
    nothing when it found no worker state to report (Temporal not asked: its line says why)."""
    from tollgate.ops.target_queues import probe_targets

    client = _clients.get((s.temporal_address, s.namespace))
    if client is None or workers["state"] not in ("ok", "no worker"):
        return []
    return await probe_targets(client, s.task_queue)

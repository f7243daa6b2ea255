"""`tollgate ops close --unresolved-write`: the evidence that an open receipt will not settle,
and the dead letter that carries its write to an operator.

A run terminated while its send was in flight leaves its receipt open (PENDING, UNKNOWN). The
receipt sweep settles it SUCCEEDED once the target holds the key; a key the target never holds
stays open for ever, and so did the event. The reconciler meets the same write inside a run and
ends it STOPPED with a dead letter (``unreconciled_write``): never a resend blind, never a guess.
This ends the terminated run's event the same way, on the same evidence:

- the receipt has not changed for the sweep's window (15 minutes; the target's declared lookup
  window when longer): every attempt of the send has long ended (its call is cut at 30 s), a
  slow write has had the time the target's owner promised to become visible, and the sweep
  has had its look;
- the target, asked once more for the key through the adapter the sweep uses, does not hold
  it. A target that holds it is left to the sweep (it settles SUCCEEDED, then the close ends
  the event as its receipt says); a target declared without lookup is not asked: waiting
  would tell nothing, as the reconciler reasons.

The dead letter has the reconciler's code, owner and plan, and its replay input when the send
can be built again from what PostgreSQL holds and gives the receipt's request fingerprint, so
`tollgate ops dlq approve/replay` go on as for the reconciler's own (the replay looks the key
up first and resends only to a target that dedupes by key).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import asyncpg
from pydantic import ValidationError

from adapters.postgres.open_send import OpenSend, open_send
from adapters.postgres.run_close import OPEN_FROM, UnresolvedWrite
from contracts import TERMINAL_STATES, ActionRequest, EventState, ReceiptStatus, ReconcileRequest
from contracts.actions import UNRECONCILED_PLAN
from contracts.errors import TollgateError
from contracts.sweep import SweepRequest
from contracts.triage import TICKET_CHANNEL
from policies.keys import request_fingerprint
from policies.redaction import redact
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit, Failure
from tollgate.runtime.targets import URL_VARIABLES, action_adapters

#: The sweep's own window: it looks up open receipts untouched for this long.
SWEEP_WINDOW = SweepRequest().older_than
#: The plan of a dead letter with no replay input.
NO_REPLAY_PLAN = (
    "Check the target for this action key by hand. The send could not be built again from "
    "what PostgreSQL holds (no approved draft that gives the receipt's request fingerprint), so "
    "it is not replayed from here: if absent and the customer still needs it, the producer "
    "submits the event again under a new event id, which goes through review again.")
_OPEN = (ReceiptStatus.PENDING, ReceiptStatus.UNKNOWN)


def window(s: Settings, adapter: str) -> timedelta:
    """How long an open receipt of ``adapter`` must not have changed."""
    declared = s.targets.capabilities.get(adapter)
    lag = declared.lookup_window_s if declared and declared.lookup_window_s else 0
    return max(SWEEP_WINDOW, timedelta(seconds=lag))


def minutes(span: timedelta) -> str:
    return f"{int(span.total_seconds() // 60)} min"


def _left(quiet: timedelta | None, wait: timedelta) -> str:
    """How long until a receipt unchanged for ``quiet`` has been so for ``wait``, rounded up:
    the sweep run before that looks it up not at all, so "run the sweep" alone sends the
    operator to a command that answers "0 still open" and a close refused again."""
    seconds = max(0.0, (wait - (quiet or timedelta(0))).total_seconds())
    return f"{-(-int(seconds) // 60)} min"


def write_unknown(workflow_id: str, state: str | None, receipt: str | None,
                  quiet: timedelta | None) -> Failure:
    """The close refused for an open receipt, without ``--unresolved-write``."""
    wait = SWEEP_WINDOW
    when = (f" (it looks up only receipts unchanged for {minutes(wait)}; this one changed "
            f"{minutes(quiet or timedelta(0))} ago: run it in {_left(quiet, wait)})"
            if (quiet or timedelta(0)) < wait else "")
    return Failure(Exit.REFUSED, f"{workflow_id}: not closed: its send was started and the "
                   f"write is unknown (state {state}, receipt {receipt}); tollgate ops sweep "
                   f"settles the receipt once the target holds its key{when}, then close it "
                   f"again; one it keeps open past {minutes(wait)}: --unresolved-write "
                   "(docs/runbook.md)")


def too_recent(workflow_id: str, state: str | None, receipt: str | None,
               quiet: timedelta | None, wait: timedelta) -> Failure:
    return Failure(Exit.REFUSED, f"{workflow_id}: not closed: its receipt ({receipt}, state "
                   f"{state}) changed {minutes(quiet or timedelta(0))} ago, within "
                   f"{minutes(wait)}: a send may still land and the sweep has not looked it up "
                   f"yet; run tollgate ops sweep in {_left(quiet, wait)} and close it again "
                   "after that")


def not_after_send(workflow_id: str, state: str | None, receipt: str | None) -> Failure:
    return Failure(Exit.REFUSED, f"{workflow_id}: not closed: its receipt is {receipt} yet its "
                   f"record is {state}, a state no send ends from (docs/runbook.md)")


async def unresolved_write(s: Settings, pool: asyncpg.Pool,
                           workflow_id: str) -> UnresolvedWrite | None:
    """The evidence and the dead letter for ``workflow_id``'s open receipt; None when it has
    no open receipt or has ended (the close then goes as without the flag). Raises
    ``Failure`` when the receipt is too young, the record is in a state no send leaves, or
    the target holds the key or cannot be asked."""
    send = await open_send(pool, workflow_id)
    if send is None or send.receipt.status not in _OPEN or send.state in TERMINAL_STATES:
        return None
    receipt, status = send.receipt, send.receipt.status.value
    if EventState(send.state) not in OPEN_FROM:
        raise not_after_send(workflow_id, send.state, status)
    wait = window(s, receipt.adapter)
    if send.open_for < wait:
        raise too_recent(workflow_id, send.state, status, send.open_for, wait)
    looked_up = await _not_held(s, workflow_id, receipt.adapter, receipt.action_key)
    replay = _replay_input(s, send)
    facts = redact({"action_key": receipt.action_key, "adapter": receipt.adapter,
                    "tenant_id": send.ref.tenant_id, "event_id": send.ref.event_id})
    return UnresolvedWrite(open_for=wait, looked_up=looked_up,
                           plan=UNRECONCILED_PLAN if replay else NO_REPLAY_PLAN,
                           redacted_payload=facts, replay_input=replay)


async def _not_held(s: Settings, workflow_id: str, name: str, key: str) -> bool:
    """True once the target said it does not hold ``key``; False for a target declared
    without lookup. Raises when it holds it, or cannot be asked."""
    variable = URL_VARIABLES.get(name)
    if variable is None:
        raise Failure(Exit.REFUSED, f"{workflow_id}: not closed: its receipt names a target "
                      f"this command does not know ({name}): check it by hand")
    adapters = action_adapters(s)
    try:
        adapter = adapters.get(name)
        if adapter is None:
            raise Failure(Exit.UNREACHABLE, f"{workflow_id}: not closed: no {name} target to "
                          f"look its key up at: {variable} is not set and no `tollgate dev` "
                          "is running")
        if not adapter.supports_lookup:
            return False
        try:
            held = await adapter.lookup(key)
        except TollgateError as exc:
            raise Failure(Exit.UNREACHABLE, f"{workflow_id}: not closed: the {name} target "
                          f"did not answer the lookup of its key ({exc.code})") from None
    finally:
        for each in adapters.values():
            await each.aclose()
    if held is not None:
        raise Failure(Exit.REFUSED, f"{workflow_id}: not closed: the {name} target holds the "
                      "write for its key: tollgate ops sweep settles the receipt SUCCEEDED, "
                      "then close it again")
    return True


def _replay_input(s: Settings, send: OpenSend) -> dict[str, Any] | None:
    """The reconciler's request for this send, as its dead letter stores it (no token), when
    the approved draft and its approval give back the receipt's request fingerprint; the
    channel is not stored, so each the send can have is tried against that fingerprint."""
    receipt = send.receipt
    if send.approved_by is None or send.body is None or receipt.policy_version is None:
        return None
    declared = s.targets.capabilities.get(receipt.adapter)
    for channel in ("sms", TICKET_CHANNEL):
        try:
            action = ActionRequest(
                ref=send.ref, adapter=receipt.adapter, action=receipt.action,
                action_key=receipt.action_key, channel=channel, body=send.body,
                policy_version=receipt.policy_version, approved_by=send.approved_by)
        except ValidationError:
            return None
        if request_fingerprint(action) != receipt.request_fingerprint:
            continue
        request = ReconcileRequest(ref=send.ref, action=action, draft_version=send.draft_version)
        if declared and declared.lookup_window_s:
            request = request.model_copy(
                update={"lookup_window": timedelta(seconds=declared.lookup_window_s)})
        return request.model_dump(mode="json", exclude={"action_token"})
    return None

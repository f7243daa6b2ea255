"""Kill switches on the time-skipping server, against a deduping and a non-deduping target: a
closed switch holds the send (nothing sent, nothing failed), other tenants go on, reopening lets
it through; a canary reopening lets N actions through and closes again."""

from __future__ import annotations

from temporalio.client import Client

from adapters.postgres.ops import OpsStore
from contracts import EventState
from tests.conftest import Handle, signed_event
from tests.eventually import eventually
from tests.faults.conftest import activity_attempts, send_key
from tests.faults.kill_switch_support import (
    approved,
    customer,
    held_and_waiting,
    new_key,
    ops,
    sent,
)
from tollgate.dev.standins import StandIns

__all__ = ["ops"]  # the fixture, from kill_switch_support.py


async def execute_statuses(client: Client, handle: Handle) -> list[str]:
    return [a.result["status"] for a in await activity_attempts(client, handle.id,
                                                                "execute_action")]


async def test_closed_switch_holds_one_tenant_until_reopened(
    worker_client: tuple[Client, str], standins: StandIns, ops: OpsStore, target_mode: str
) -> None:
    """Fault: the messaging kill switch is closed for tenant acme.
    Evidence: the acme send step answered "held" and its re-check timer started, with no POST;
    a globex event went through meanwhile.
    Invariant: nothing sent while closed, nothing failed; after reopening, one POST and one
    message for the held event."""
    client, queue = worker_client
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="incident 42", actor="op.kim")
    held_key, other_key = new_key(), new_key()
    held = await approved(client, queue, signed_event(customer(standins), key=held_key))
    other = await approved(client, queue, signed_event(customer(standins, "globex"),
                                                       key=other_key, tenant="globex"))
    assert (await other.result()).state == EventState.SUCCEEDED  # other tenants unaffected
    assert sent(standins, send_key(other_key, "globex")) == (1, 1)
    await eventually(lambda: held_and_waiting(client, held), "a held send and its re-check")
    assert await held.query("state") == EventState.EXECUTING
    assert sent(standins, send_key(held_key)) == (0, 0)
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=False,
                         reason="fixed", actor="op.kim")
    outcome = await held.result()  # the 30 s re-check passes in simulated time
    assert outcome.state == EventState.SUCCEEDED
    statuses = await execute_statuses(client, held)
    assert set(statuses[:-1]) == {"held"} and statuses[-1] == "succeeded"
    assert sent(standins, send_key(held_key)) == (1, 1)


async def test_canary_reopening_lets_n_through_then_closes_until_confirmed(
    worker_client: tuple[Client, str], standins: StandIns, ops: OpsStore, target_mode: str
) -> None:
    """Fault: a global switch reopened as a canary of one action.
    Evidence: the first send went through; the second answered "held" and started its
    re-check timer, with no POST, and the switch row shows closed again.
    Invariant: one action through per canary slot; after confirmation the second is sent
    once; one POST and one message each."""
    client, queue = worker_client
    await ops.set_switch(adapter="*", tenant_id="*", closed=False, reason="canary after fix",
                         actor="op.kim", canary=1)
    first_key, second_key = new_key(), new_key()
    first = await approved(client, queue, signed_event(customer(standins), key=first_key))
    assert (await first.result()).state == EventState.SUCCEEDED
    second = await approved(client, queue, signed_event(customer(standins), key=second_key))
    await eventually(lambda: held_and_waiting(client, second), "a held send and its re-check")
    assert sent(standins, send_key(second_key)) == (0, 0)
    switches = {(s["adapter"], s["tenant_id"]): s for s in await ops.switches()}
    assert switches[("*", "*")]["closed"] is True
    await ops.set_switch(adapter="*", tenant_id="*", closed=False, reason="confirmed",
                         actor="op.kim")
    assert (await second.result()).state == EventState.SUCCEEDED
    assert await execute_statuses(client, first) == ["succeeded"]
    assert sent(standins, send_key(first_key)) == (1, 1)
    assert sent(standins, send_key(second_key)) == (1, 1)

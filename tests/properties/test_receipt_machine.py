"""The receipt store on real PostgreSQL under any order of opens, attempts and settles.

Hypothesis drives ``ReceiptStore`` against a model of the contract (docs/receipts.md): each
attempt takes a fence; a settle lands only on an open receipt (PENDING or UNKNOWN) and only
with the latest fence (or none: the reconciler's); a final receipt (SUCCEEDED, REJECTED) never
changes again. After every step the row must equal the model, so a settle that lost its fence
check, or one that reopens a final receipt, is found with the shortest order that shows it.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from policies.keys import action_key
from tests.conftest import fresh_key

OPEN = {ReceiptStatus.PENDING, ReceiptStatus.UNKNOWN}
SETTLE_TO = st.sampled_from([ReceiptStatus.SUCCEEDED, ReceiptStatus.REJECTED,
                             ReceiptStatus.UNKNOWN])
FENCE_KIND = st.sampled_from(["latest", "stale", "reconciler"])


@dataclass
class Expected:
    """What the contract says one receipt must look like now."""

    status: ReceiptStatus = ReceiptStatus.PENDING
    fence: int = 0
    attempts: int = 0
    external_id: str | None = None
    fences_given: list[int] = field(default_factory=list)


def _request(event_id: str) -> ActionRequest:
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c", schema_version=3)
    return ActionRequest(ref=ref, adapter="messaging", action="send_message",
                         action_key=action_key("acme", event_id, "messaging", "send_message"),
                         channel="sms", body="hello", policy_version="v", approved_by="r")


class ReceiptMachine(RuleBasedStateMachine):
    loop: asyncio.AbstractEventLoop
    store: ReceiptStore
    keys = Bundle("keys")

    def __init__(self) -> None:
        super().__init__()
        self.model: dict[str, Expected] = {}

    def run(self, coro):  # type: ignore[no-untyped-def]
        return self.loop.run_until_complete(coro)

    @initialize(target=keys)
    def first_receipt(self) -> str:
        return self._open(fresh_key("evt"))

    @rule(target=keys)
    def another_receipt(self) -> str:
        return self._open(fresh_key("evt"))

    def _open(self, event_id: str) -> str:
        request = _request(event_id)
        receipt = self.run(self.store.open_receipt(request, "fp"))
        assert receipt.status == ReceiptStatus.PENDING
        self.model[request.action_key] = Expected()
        return request.action_key

    @rule(key=keys)
    def open_again(self, key: str) -> None:
        """A redelivery opens the same key: it returns the row as it is, never a fresh one."""
        event_id = self.run(self.store.pool.fetchval(
            "SELECT event_id FROM receipts WHERE action_key = $1", key))
        receipt = self.run(self.store.open_receipt(_request(event_id), "fp"))
        assert receipt.status == self.model[key].status

    @rule(key=keys)
    def begin(self, key: str) -> None:
        expected = self.model[key]
        fence = self.run(self.store.begin_attempt(key))
        if expected.status in OPEN:
            expected.fence += 1
            expected.attempts += 1
            assert fence == expected.fence
            expected.fences_given.append(fence)
        else:
            assert fence == -1, "an attempt was counted on a final receipt"

    @rule(key=keys, status=SETTLE_TO, which=FENCE_KIND, data=st.data())
    def settle(self, key: str, status: ReceiptStatus, which: str, data: st.DataObject) -> None:
        expected = self.model[key]
        if which == "latest":
            fence: int | None = expected.fence
        elif which == "stale":
            older = [f for f in expected.fences_given if f < expected.fence]
            fence = data.draw(st.sampled_from(older)) if older else expected.fence - 1
        else:
            fence = None
        external = f"msg_{uuid.uuid4().hex[:8]}" if status == ReceiptStatus.SUCCEEDED else None
        receipt = self.run(self.store.settle(key, status, fence=fence, external_id=external))
        lands = expected.status in OPEN and (fence is None or fence == expected.fence)
        if lands:
            expected.status = status
            expected.external_id = external or expected.external_id
        assert receipt.status == expected.status
        assert receipt.external_id == expected.external_id

    @invariant()
    def rows_match_the_contract(self) -> None:
        if not self.model:
            return
        rows = self.run(self.store.pool.fetch(
            "SELECT action_key, status, fence, attempts, external_id FROM receipts"
            " WHERE action_key = ANY($1::text[])", list(self.model)))
        assert len(rows) == len(self.model), "one row per action key"
        for row in rows:
            expected = self.model[row["action_key"]]
            assert (row["status"], row["fence"], row["attempts"], row["external_id"]) == (
                expected.status.value, expected.fence, expected.attempts, expected.external_id)


def test_receipt_store_state_machine(database_url: str) -> None:
    """Any order of opens, attempts and settles keeps at most one outcome per key, final
    receipts final, and no stale attempt's settle over a newer one."""
    loop = asyncio.new_event_loop()
    try:
        pool = loop.run_until_complete(create_pool(database_url, max_size=2))
        machine = type("BoundReceiptMachine", (ReceiptMachine,),
                       {"loop": loop, "store": ReceiptStore(pool)})
        run_state_machine_as_test(machine, settings=settings(
            max_examples=60, stateful_step_count=25, deadline=None,
            suppress_health_check=[HealthCheck.too_slow]))
        loop.run_until_complete(pool.close())
    finally:
        loop.close()

"""For the tests of unknown writes moved aside as dead letters: a target that never answers, an
open write, its dead letter, a database holding one, and what ops status counts."""

from __future__ import annotations

from datetime import UTC, datetime

import asyncpg

from adapters.ports.targets import TargetWrite
from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from adapters.postgres.receipts import ReceiptStore
from adapters.postgres.status import StatusStore
from contracts import ActionRequest, EventRef, ReceiptStatus
from contracts.actions import UNRECONCILED_CODE, UNRECONCILED_OWNER, UNRECONCILED_PLAN
from policies.keys import action_key
from tests.conftest import fresh_key
from tests.pg_databases import fresh_database
from tollgate.cli.ops_status import needs_a_human


class EmptyTarget:
    """A target that can be looked up, holds nothing, and remembers what it was asked."""

    supports_lookup = True
    dedupes_by_key = True

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def lookup(self, key: str) -> TargetWrite | None:
        self.asked.append(key)
        return None


async def open_write(receipts: ReceiptStore, status: ReceiptStatus = ReceiptStatus.UNKNOWN
                     ) -> tuple[str, str]:
    """A receipt left open (UNKNOWN, or PENDING) 20 minutes ago: the sweep's to look up."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id="C-1", correlation_id="c",
                   schema_version=3)
    a = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                      action_key=action_key("acme", event_id, "messaging", "send_message"),
                      channel="sms", body="hi", policy_version="v", approved_by="r")
    await receipts.open_receipt(a, "fp")
    if status == ReceiptStatus.UNKNOWN:
        await receipts.settle(a.action_key, status, fence=None, error_class="unknown_write",
                              error_code="gateway_timeout")
    await receipts.pool.execute("UPDATE receipts SET updated_at = now() - interval '20 minutes'"
                                " WHERE action_key = $1", a.action_key)
    return ref.workflow_id, a.action_key


async def letter(ops: OpsStore, workflow_id: str, key: str, *, code: str = UNRECONCILED_CODE,
                 error_class: str = "unknown_write", state: str = "STOPPED") -> int:
    """A dead letter for the write: the reconciler's by default (``ops close
    --unresolved-write`` writes the same)."""
    await ops.dead_letter(workflow_id=workflow_id, error_class=error_class, error_code=code,
                          state=state, owner=UNRECONCILED_OWNER, replay_plan=UNRECONCILED_PLAN,
                          redacted_payload=None, tenant_id="acme", event_id=None,
                          correlation_id="c", action_key=key)
    return int(await ops.pool.fetchval(
        "SELECT id FROM dead_letters WHERE workflow_id = $1 AND error_code = $2",
        workflow_id, code))


async def lettered_database(pg_server: str) -> tuple[str, int]:
    """A fresh database whose one unknown write the reconciler moved aside to a dead letter:
    its URL and the dead letter's id."""
    url = await fresh_database(pg_server)
    pool = await create_pool(url, max_size=2)
    try:
        wid, key = await open_write(ReceiptStore(pool))
        return url, await letter(OpsStore(pool), wid, key)
    finally:
        await pool.close()


async def figures(pool: asyncpg.Pool) -> tuple[int, int, int, list[str]]:
    """Open unknown writes, moved aside, waiting dead letters, and why it needs a human."""
    snap = await StatusStore(pool).snapshot(datetime.now(UTC))
    why = needs_a_human({**snap, "outbox": {}}, max_past_sla=0, max_unknown=0,
                        max_dead_letters=0, max_open_age_s=3600)
    return (snap["open_unknown_writes"], snap["unknown_writes_moved_aside"],
            sum(r["count"] for r in snap["dead_letters"]), why)

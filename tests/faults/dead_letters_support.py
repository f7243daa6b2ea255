"""For the dead-letter fault tests: an unreconciled write to seed, and an `ops` command run on
the rig as an operator."""

from __future__ import annotations

from datetime import timedelta

import asyncpg

from adapters.http.messaging import MessagingHttpAdapter
from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReceiptStatus, ReconcileRequest
from policies.keys import action_key
from tests.cli.helpers import run_ops
from tests.conftest import fresh_key
from tests.faults.conftest import Rig


async def seed_unreconciled(
    rig: Rig, pool: asyncpg.Pool, *, stored_at_target: bool = False
) -> tuple[int, str]:
    """A write that ended unknown and was dead-lettered, as the reconciler leaves it."""
    event_id = fresh_key("evt")
    ref = EventRef(workflow_id=f"event/acme/{event_id}", tenant_id="acme", event_id=event_id,
                   event_type="CARE_DUE", entity_id=rig.customer(), correlation_id="corr-dlq",
                   schema_version=3)
    key = action_key("acme", event_id, "messaging", "send_message")
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message", action_key=key,
                           channel="sms", body="Reminder: Miu's check-up is due.",
                           policy_version="2026-11-30.1", approved_by="an.tran")
    if stored_at_target:  # the 504-after-write case: the target took it, nobody heard back
        target = MessagingHttpAdapter(rig.standins.messaging_url)
        try:
            await target.execute(action)
        finally:
            await target.aclose()
    receipts = ReceiptStore(pool)
    await receipts.open_receipt(action, "fp")
    fence = await receipts.begin_attempt(key)
    await receipts.settle(key, ReceiptStatus.UNKNOWN, fence=fence, error_class="unknown_write",
                          error_code="target_504")
    request = ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(seconds=1))
    await OpsStore(pool).dead_letter(
        workflow_id=ref.workflow_id, error_class="unknown_write", error_code="unreconciled_write",
        state="STOPPED", owner="messaging-oncall", replay_plan="check by hand", tenant_id="acme",
        redacted_payload=None, event_id=event_id, correlation_id="corr-dlq", action_key=key,
        replay_input=request.model_dump(mode="json"))
    dl_id = await pool.fetchval("SELECT id FROM dead_letters WHERE action_key = $1", key)
    return int(dl_id), key


async def ops(rig: Rig, *argv: str, role: str = "change_owner") -> int:
    """``tollgate ops ARGV`` as op.kim, holding a token of ``role`` for acme."""
    return await run_ops(list(argv), rig.settings, role=role)

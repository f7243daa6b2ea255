"""For the dead-letter command tests (`tollgate ops dlq`): the settings they run with and a
replayable dead letter."""

from __future__ import annotations

from pathlib import Path

from adapters.postgres.ops import OpsStore
from adapters.postgres.receipts import ReceiptStore
from contracts import ActionRequest, EventRef, ReconcileRequest
from tests.cli.unknown_write_support import letter, open_write
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tollgate.config.settings import Settings


def settings(url: str, state_dir: Path, temporal: str | None = None) -> Settings:
    # Temporal nowhere unless given: a dead letter never replayed closes with PostgreSQL alone.
    return Settings.from_env({"DATABASE_URL": url, "TOLLGATE_STATE_DIR": str(state_dir),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": temporal or f"127.0.0.1:{free_port()}"})


async def replayable(receipts: ReceiptStore, ops: OpsStore) -> tuple[int, str]:
    """An unknown write the reconciler gave up on, its dead letter replayable from here."""
    wid, key = await open_write(receipts)
    dl_id = await letter(ops, wid, key)
    event_id = wid.rsplit("/", 1)[1]
    ref = EventRef(workflow_id=wid, tenant_id="acme", event_id=event_id, event_type="CARE_DUE",
                   entity_id="C-1", correlation_id="c", schema_version=3)
    request = ReconcileRequest(ref=ref, action=ActionRequest(
        ref=ref, adapter="messaging", action="send_message", action_key=key, channel="sms",
        body="hi", policy_version="v", approved_by="r"))
    await ops.pool.execute("UPDATE dead_letters SET replay_input = $2::jsonb WHERE id = $1",
                           dl_id, request.model_dump_json())
    return dl_id, key

"""A dead letter's stored replay request that reads, as a real unknown write's dead letter
stores it: `ops dlq approve` and `replay` refuse one that does not, before anything else
(tollgate/ops/actions.py, ``replay_refusal``)."""

from __future__ import annotations

from datetime import timedelta

from contracts import ActionRequest, EventRef, ReconcileRequest


def stored_request(event_id: str, action_key: str, *, tenant: str = "acme") -> dict[str, object]:
    """The replay request of event ``event_id``'s send under ``action_key``, as JSON."""
    ref = EventRef(workflow_id=f"event/{tenant}/{event_id}", tenant_id=tenant,
                   event_id=event_id, event_type="CARE_DUE", entity_id="C-1",
                   correlation_id="corr", schema_version=3)
    action = ActionRequest(ref=ref, adapter="messaging", action="send_message",
                           action_key=action_key, channel="sms", body="hello",
                           policy_version="v", approved_by="r")
    request = ReconcileRequest(ref=ref, action=action, lookup_window=timedelta(seconds=1))
    return request.model_dump(mode="json")

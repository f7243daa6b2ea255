"""Keys for side effects and fingerprints of requests, derived from business data only.

A key built from a run id or a random value would change on retry and defeat deduplication at
the target; these change only when the business action does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contracts import ActionRequest


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def event_workflow_id(tenant_id: str, idempotency_key: str) -> str:
    return f"event/{tenant_id}/{idempotency_key}"


def quarantine_workflow_id(raw: str) -> str:
    """Input too broken to name its tenant or key still gets one workflow per distinct body."""
    # surrogatepass: text refused for lone surrogates still needs its one id
    return f"quarantine/{hashlib.sha256(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}"


def fan_out_id(event_id: str) -> str:
    """The fan-out run of one business event: a second publish of it is a duplicate."""
    return f"fan-out/{event_id}"


def tag_workflow_id(item_id: int, run: int) -> str:
    """From business data only: the item and which manual run (1 = the save's own)."""
    return f"tag-item/{item_id}/run-{run}"


def action_key(tenant_id: str, event_id: str, adapter: str, action: str) -> str:
    return "ak_" + _digest(tenant_id, event_id, adapter, action)[:48]


def payload_fingerprint(raw: str) -> str | None:
    """Fingerprint of the ``payload`` of an event given as JSON text (None if it has none):
    two deliveries with one idempotency key must carry the same one."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    payload = data.get("payload") if isinstance(data, dict) else None
    return fingerprint(payload) if isinstance(payload, dict) else None


def fingerprint(value: Mapping[str, Any]) -> str:
    """Stable hash of a JSON-able mapping: same meaning, same fingerprint."""
    body = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def request_fingerprint(action: ActionRequest) -> str:
    """What a send's receipt records of the request it carried: the same action, channel, body
    and recipient give the same fingerprint (a replay's resend must carry the same one)."""
    return fingerprint({"adapter": action.adapter, "action": action.action,
                        "channel": action.channel, "body": action.body,
                        "recipient": action.ref.entity_id})

"""Keys for side effects and fingerprints of requests, derived from business data only.

A key built from a run id or a random value would change on retry and defeat deduplication at
the target; these change only when the business action does.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def event_workflow_id(tenant_id: str, idempotency_key: str) -> str:
    return f"event/{tenant_id}/{idempotency_key}"


def quarantine_workflow_id(raw: str) -> str:
    """Input too broken to name its tenant or key still gets one workflow per distinct body."""
    # surrogatepass: text refused for lone surrogates still needs its one id
    return f"quarantine/{hashlib.sha256(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:40]}"


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

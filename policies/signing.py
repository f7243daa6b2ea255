"""HMAC-SHA256 signatures over the canonical envelope, one secret per tenant.

The canonical form is the envelope as JSON without ``signature`` and ``received_at`` (the intake
stamps that), keys sorted, no insignificant whitespace, UTF-8. Producers sign exactly these bytes;
``sign`` is what they (and the demo) call.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

SIGNATURE_PREFIX = "sha256="
_UNSIGNED_FIELDS = frozenset({"signature", "received_at"})


def canonical_bytes(envelope: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in envelope.items() if k not in _UNSIGNED_FIELDS}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign(envelope: Mapping[str, Any], secret: str) -> str:
    digest = hmac.new(secret.encode(), canonical_bytes(envelope), hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def sign_json(raw: str, secrets: Mapping[str, str]) -> str:
    """Sign one event given as JSON text with its tenant's secret. Text that is not a JSON
    object naming a known tenant comes back unchanged: intake will say what is wrong with it."""
    try:
        event = json.loads(raw)
    except ValueError:
        return raw
    tenant = event.get("tenant_id") if isinstance(event, dict) else None
    secret = secrets.get(tenant) if isinstance(tenant, str) else None
    if secret is None:
        return raw
    return json.dumps({**event, "signature": sign(event, secret)}, ensure_ascii=False)


def verify(envelope: Mapping[str, Any], secret: str) -> bool:
    given = envelope.get("signature")
    if not isinstance(given, str):
        return False
    # Bytes, not str: compare_digest refuses non-ASCII text, and a forged signature may hold any.
    return hmac.compare_digest(given.encode(), sign(envelope, secret).encode())

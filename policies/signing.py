"""HMAC-SHA256 signatures over the canonical envelope, one secret per tenant.

The canonical form is the envelope as JSON without ``signature`` and ``received_at`` (the intake
stamps that), keys sorted, no insignificant whitespace, UTF-8. Producers sign exactly these bytes;
``sign`` is what they (and the demo) call.

Every function here is total: a lone surrogate (no valid event holds one; the edge refuses it,
``policies.edge_text``) is encoded with ``surrogatepass`` and too deep a document is "not
signable", so a hostile event is refused for what it is instead of failing as a 500 or exit 9.
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
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def sign(envelope: Mapping[str, Any], secret: str) -> str:
    digest = hmac.new(secret.encode(), canonical_bytes(envelope), hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def sign_json(raw: str, secrets: Mapping[str, str]) -> str:
    """Sign one event given as JSON text with its tenant's secret. Text that is not a JSON
    object naming a known tenant comes back unchanged: intake will say what is wrong with it."""
    try:
        event = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    tenant = event.get("tenant_id") if isinstance(event, dict) else None
    secret = secrets.get(tenant) if isinstance(tenant, str) else None
    if secret is None:
        return raw
    try:
        return json.dumps({**event, "signature": sign(event, secret)}, ensure_ascii=False)
    except RecursionError:
        return raw


def verify(envelope: Mapping[str, Any], secret: str) -> bool:
    given = envelope.get("signature")
    if not isinstance(given, str):
        return False
    try:
        expected = sign(envelope, secret)
    except RecursionError:  # too deep to have been signed by anyone
        return False
    # Bytes, not str: compare_digest refuses non-ASCII text, and a forged signature may hold any.
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())

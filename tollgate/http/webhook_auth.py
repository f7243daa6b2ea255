"""Who may post events: an HMAC over the timestamp and the exact body, one secret per tenant.

Producers send ``X-Tollgate-Tenant``, ``X-Tollgate-Timestamp`` (Unix seconds) and
``X-Tollgate-Signature: sha256=<hex>`` where the hex is HMAC-SHA256 of ``"{timestamp}." + body``
with the tenant's secret. Signing the timestamp with the body lets the service refuse replays
older than the window without remembering every body it saw.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass

TENANT_HEADER = "X-Tollgate-Tenant"
TIMESTAMP_HEADER = "X-Tollgate-Timestamp"
SIGNATURE_HEADER = "X-Tollgate-Signature"
#: How far a signed timestamp may be from the service clock, either way.
REPLAY_WINDOW_S = 300


@dataclass(frozen=True)
class AuthProblem:
    """Why a post is refused: 401 (not signed right) or 403 (tenant problem)."""

    status: int
    code: str
    message: str


def body_signature(secret: str, timestamp: str, body: bytes) -> str:
    """What a producer puts in ``X-Tollgate-Signature``."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def check_post(
    headers: Mapping[str, str], body: bytes, secrets: Mapping[str, str], now: float
) -> tuple[str, AuthProblem | None]:
    """The tenant a post speaks for, or the problem with it (never echoing a secret)."""
    tenant = headers.get(TENANT_HEADER.lower(), "")
    timestamp = headers.get(TIMESTAMP_HEADER.lower(), "")
    given = headers.get(SIGNATURE_HEADER.lower(), "")
    if not tenant or not timestamp or not given:
        return tenant, AuthProblem(401, "signature_missing",
                                   f"send {TENANT_HEADER}, {TIMESTAMP_HEADER} and "
                                   f"{SIGNATURE_HEADER}")
    secret = secrets.get(tenant)
    if secret is None:
        return tenant, AuthProblem(403, "unknown_tenant", "the tenant is not known here")
    try:
        stamped = int(timestamp)
    except ValueError:
        return tenant, AuthProblem(401, "bad_timestamp", f"{TIMESTAMP_HEADER} must be Unix "
                                   "seconds")
    if abs(now - stamped) > REPLAY_WINDOW_S:
        return tenant, AuthProblem(401, "stale_timestamp", f"{TIMESTAMP_HEADER} is more than "
                                   f"{REPLAY_WINDOW_S} s from the service clock")
    if not hmac.compare_digest(given.encode(), body_signature(secret, timestamp, body).encode()):
        return tenant, AuthProblem(401, "bad_signature",
                                   "the signature does not match the tenant's key")
    return tenant, None

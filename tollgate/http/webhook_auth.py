"""Who may post events: an HMAC over the timestamp and the exact body, one secret per tenant.

Two schemes, the same tenant key (ADR 0034):

- Standard Webhooks 1.0 on ``POST /v1/events/{tenant}``: ``webhook-id``, ``webhook-timestamp``
  and ``webhook-signature`` (``v1,<base64>`` HMAC-SHA256 of ``id.timestamp.body``; several,
  space-separated, while a sender rotates its secret), verified by the ``standardwebhooks``
  library. The tenant is in the path because a Standard Webhooks sender is configured with a
  URL and a secret only. The tenant's secret is used as it is when it has the ``whsec_`` form,
  otherwise its UTF-8 bytes are the key (``standard_secret`` gives the ``whsec_`` form).
- Tollgate's own on ``POST /v1/events``: producers send ``X-Tollgate-Tenant``,
  ``X-Tollgate-Timestamp`` (Unix seconds) and ``X-Tollgate-Signature: sha256=<hex>`` where the
  hex is HMAC-SHA256 of ``"{timestamp}." + body`` with the tenant's secret.

Signing the timestamp with the body lets the service refuse replays older than the window
without remembering every body it saw.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook, WebhookVerificationError

TENANT_HEADER = "X-Tollgate-Tenant"
TIMESTAMP_HEADER = "X-Tollgate-Timestamp"
SIGNATURE_HEADER = "X-Tollgate-Signature"
#: How far a signed timestamp may be from the service clock, either way.
REPLAY_WINDOW_S = 300
#: The Standard Webhooks headers (lower case, as Starlette hands them over).
WEBHOOK_ID, WEBHOOK_TIMESTAMP, WEBHOOK_SIGNATURE = (
    "webhook-id", "webhook-timestamp", "webhook-signature")
_WHSEC = "whsec_"


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


def _webhook(secret: str) -> Webhook:
    return Webhook(secret) if secret.startswith(_WHSEC) else Webhook(secret.encode())


def standard_secret(secret: str) -> str:
    """The tenant's key in the ``whsec_`` form a Standard Webhooks sender is configured with."""
    if secret.startswith(_WHSEC):
        return secret
    return _WHSEC + base64.b64encode(secret.encode()).decode()


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """One ``v1,<base64>`` signature, as the outgoing notices carry it."""
    return _webhook(secret).sign(msg_id, datetime.fromtimestamp(timestamp, UTC),
                                   body.decode())


def standard_headers(secret: str, msg_id: str, body: bytes) -> dict[str, str]:
    """The three headers of an outgoing Standard Webhooks post, signed now."""
    stamp = int(time.time())
    return {WEBHOOK_ID: msg_id, WEBHOOK_TIMESTAMP: str(stamp),
            WEBHOOK_SIGNATURE: standard_signature(secret, msg_id, stamp, body)}


def check_standard(headers: Mapping[str, str], body: bytes, tenant: str,
                   secrets: Mapping[str, str], now: float) -> AuthProblem | None:
    """The problem with a Standard Webhooks post for ``tenant``, or None when it is signed."""
    msg_id = headers.get(WEBHOOK_ID, "")
    timestamp = headers.get(WEBHOOK_TIMESTAMP, "")
    given = headers.get(WEBHOOK_SIGNATURE, "")
    if not msg_id or not timestamp or not given:
        return AuthProblem(401, "signature_missing", f"send {WEBHOOK_ID}, {WEBHOOK_TIMESTAMP} "
                           f"and {WEBHOOK_SIGNATURE}")
    secret = secrets.get(tenant)
    if secret is None:
        return AuthProblem(403, "unknown_tenant", "the tenant is not known here")
    # ASCII digits only, and few: ``str.isdigit`` passes ``²`` and 5,000 digits, which ``int``
    # refuses (a 500).
    if not (timestamp.isascii() and timestamp.isdigit() and len(timestamp) <= 20):
        return AuthProblem(401, "bad_timestamp", f"{WEBHOOK_TIMESTAMP} must be Unix seconds")
    # The window is checked against the service clock here (the library checks it again
    # against the wall clock) so that a stale post gets its own code.
    if abs(now - int(timestamp)) > REPLAY_WINDOW_S:
        return AuthProblem(401, "stale_timestamp", f"{WEBHOOK_TIMESTAMP} is more than "
                           f"{REPLAY_WINDOW_S} s from the service clock")
    usable = " ".join(sig for sig in given.split(" ") if _well_formed(sig))
    try:
        _webhook(secret).verify(body, {**headers, WEBHOOK_SIGNATURE: usable}, json_parse=False)
    except (WebhookVerificationError, ValueError):
        # ValueError: bytes that are not UTF-8.
        return AuthProblem(401, "bad_signature", "no signature matches the tenant's key")
    return None


def _well_formed(signature: str) -> bool:
    """``v1,<base64>`` (other versions are skipped): the library stops at the first entry it
    cannot read, which would hide a good signature sent after it."""
    version, _, value = signature.partition(",")
    if version != "v1" or not value:
        return False
    try:
        base64.b64decode(value, validate=True)
    except binascii.Error:
        return False
    return True

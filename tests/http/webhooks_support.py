"""For the Standard Webhooks tests: a sender and the headers it signs."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

from standardwebhooks.webhooks import Webhook

from tests.conftest import TENANT_SECRETS
from tollgate.http.webhook_auth import standard_secret


def sender(tenant: str = "acme") -> Webhook:
    """What the tenant configures its sender with: its key in the ``whsec_`` form."""
    return Webhook(standard_secret(TENANT_SECRETS[tenant]))


def webhook_headers(body: bytes, *signers: Webhook, msg_id: str | None = None,
                    ts: int | None = None) -> dict[str, str]:
    msg_id = msg_id or f"msg_{uuid.uuid4().hex}"
    stamp = int(time.time()) if ts is None else ts
    signed_at = datetime.fromtimestamp(stamp, UTC)
    signatures = " ".join(s.sign(msg_id, signed_at, body.decode()) for s in signers)
    return {"webhook-id": msg_id, "webhook-timestamp": str(stamp),
            "webhook-signature": signatures, "content-type": "application/json"}

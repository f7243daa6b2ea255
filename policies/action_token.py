"""The action token: what an approval allows the send step to do, and nothing more.

``approval_fingerprint`` is the sha256 of a canonical JSON of what the reviewer approved: the
draft's text, the policy version, the action, the target (adapter and channel) and the recipient
reference. At approval a token is minted over that fingerprint and the action key, signed with
HMAC-SHA256 under the deployment's token key and short-lived; the send step recomputes the
fingerprint from what it is about to send (read at the source of truth) and ``check`` says
whether the token covers it. That a token is used once is the store's part (a unique row).

Pure: the clock and the key are the caller's, so a workflow could call it, though only an
activity ever holds the key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

Refusal = Literal["token_missing", "token_malformed", "token_bad_signature", "token_expired",
                  "token_wrong_action", "token_content_changed"]


def _canonical(data: dict[str, object]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def approval_fingerprint(*, body: str, policy_version: str, action: str, adapter: str,
                         channel: str, recipient: str) -> str:
    """sha256 (hex) over what was approved; any field changed gives another fingerprint."""
    return hashlib.sha256(_canonical({
        "body": body, "policy_version": policy_version, "action": action,
        "adapter": adapter, "channel": channel, "recipient": recipient,
    })).hexdigest()


@dataclass(frozen=True)
class TokenClaims:
    token_id: str  # the first-use row's key: unique per minted token
    action_key: str
    fingerprint: str
    expires_at: int  # unix seconds


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint(*, token_id: str, action_key: str, fingerprint: str, key: bytes, now: datetime,
         ttl: timedelta) -> str:
    """``<claims>.<signature>``, both base64url; the claims carry no personal data."""
    claims = _b64(_canonical({"jti": token_id, "act": action_key, "fp": fingerprint,
                              "exp": int((now + ttl).timestamp())}))
    return f"{claims}.{_b64(hmac.new(key, claims.encode(), hashlib.sha256).digest())}"


def check(token: str | None, *, key: bytes, action_key: str, fingerprint: str,
          now: datetime) -> TokenClaims | Refusal:
    """The token's claims when it covers this send at ``now``, else why not."""
    return _verify(token, key=key, action_key=action_key, fingerprint=fingerprint, now=now)


def check_continuation(token: str | None, *, key: bytes, action_key: str,
                       fingerprint: str) -> TokenClaims | Refusal:
    """``check`` for a send that continues a use already admitted in time (the reconciler's
    keyed resend, ADR 0049): signature and scope as ever, expiry not judged again. The caller
    must prove that use from the store (the token's first-use row); the claims' id names it."""
    return _verify(token, key=key, action_key=action_key, fingerprint=fingerprint, now=None)


def _verify(token: str | None, *, key: bytes, action_key: str, fingerprint: str,
            now: datetime | None) -> TokenClaims | Refusal:
    if not token:
        return "token_missing"
    claims_part, _, signature = token.partition(".")
    try:
        given = _unb64(signature)
        data = json.loads(_unb64(claims_part))
        claims = TokenClaims(token_id=str(data["jti"]), action_key=str(data["act"]),
                             fingerprint=str(data["fp"]), expires_at=int(data["exp"]))
    except (ValueError, KeyError, TypeError, binascii.Error):
        return "token_malformed"
    expected = hmac.new(key, claims_part.encode(), hashlib.sha256).digest()
    if not hmac.compare_digest(given, expected):
        return "token_bad_signature"
    if now is not None and now.timestamp() >= claims.expires_at:
        return "token_expired"
    if claims.action_key != action_key:
        return "token_wrong_action"
    if not hmac.compare_digest(claims.fingerprint, fingerprint):
        return "token_content_changed"
    return claims

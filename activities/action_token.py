"""The action token (ADR 0027): minted at approval, checked by the send step before any call.

``mint_action_token`` runs right after the approval is recorded: it finds that approval on
record, fingerprints the action as approved (``policies.action_token``) and signs a token
scoped to the action key and that fingerprint, short-lived. ``TokenGuard.admit`` is the send
step's half: it recomputes the fingerprint from what the step is about to send, the draft's
text read from PostgreSQL (the source of truth, not the copy in the run's history), and lets the
send go on only when the token covers it and this send is the token's first use.

Only these two hold the key. The token never reaches a log line or an error message; the
refusal codes (``action_token_*``) say why without it.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

from temporalio import activity

from adapters.ports.stores.sending import ActionTokenUses
from contracts import ActionRequest, ExecuteRequest
from contracts.actions import MintedToken, MintRequest
from contracts.errors import RejectedError
from policies.action_token import approval_fingerprint, check, mint

#: The send's refusal codes (its dead letter's ``error_code``), per ``check`` refusal.
REFUSALS = {
    "token_missing": "action_token_missing",
    "token_malformed": "action_token_malformed",
    "token_bad_signature": "action_token_bad_signature",
    "token_expired": "action_token_expired",
    "token_wrong_action": "action_token_wrong_action",
    "token_content_changed": "action_token_content_changed",
}
REPLAYED = "action_token_replayed"


def fingerprint_of(action: ActionRequest, body: str) -> str:
    """What the reviewer approved, as the token binds it; ``body`` from wherever the caller
    holds the source of truth."""
    return approval_fingerprint(body=body, policy_version=action.policy_version,
                                action=action.action, adapter=action.adapter,
                                channel=action.channel, recipient=action.ref.entity_id)


def token_id_of(request: MintRequest) -> str:
    """From business data: the same approval mints under the same id (a retried mint), another
    draft version or review request under another."""
    action = request.action
    seed = f"{action.action_key}\n{action.ref.workflow_id}\n{request.draft_version}\n" \
           f"{request.request_id}"
    return hashlib.sha256(seed.encode()).hexdigest()[:32]


class ActionTokenActivities:
    def __init__(self, store: ActionTokenUses, key: bytes, ttl: timedelta) -> None:
        self.store = store
        self.key = key
        self.ttl = ttl

    @activity.defn
    async def mint_action_token(self, request: MintRequest) -> MintedToken:
        action = request.action
        if not await self.store.has_approval(action.ref.workflow_id, request.draft_version):
            raise RejectedError("no_approval_on_record", "no accepted approval for this draft")
        # The server's clock, as the check reads it (the send's scheduled time), not this host's.
        now = request.as_of
        token_id = token_id_of(request)
        token = mint(token_id=token_id, action_key=action.action_key,
                     fingerprint=fingerprint_of(action, action.body), key=self.key, now=now,
                     ttl=self.ttl)
        return MintedToken(token=token, token_id=token_id, expires_at=now + self.ttl)


class TokenGuard:
    """The send step's check (``ExecuteActivities``)."""

    def __init__(self, store: ActionTokenUses, key: bytes) -> None:
        self.store = store
        self.key = key

    async def admit(self, request: ExecuteRequest, draft_body: str | None) -> None:
        """Return when the token covers this send and this send holds its single use.

        Expiry is judged at the time the workflow scheduled this send: its retries continue a
        use that began in time, while a send scheduled later (after a kill switch held it, or
        one replaying the token) must carry a token still valid then.

        Raises:
            RejectedError: ``action_token_*``, final: the event is dead-lettered with the code.
        """
        action = request.action
        info = activity.info()
        # No draft on record for the approved version: the token covers nothing to send.
        body = "" if draft_body is None else draft_body
        claims = check(request.action_token, key=self.key, action_key=action.action_key,
                       fingerprint=fingerprint_of(action, body), now=info.scheduled_time)
        if isinstance(claims, str):
            raise RejectedError(REFUSALS[claims], "the action token does not cover this send")
        # One send: its retries, its re-runs after a kill switch held it, and its continuation
        # in a new run past the history budget all share the workflow id and the send's number.
        use_id = f"{info.workflow_id}/{request.seq}"
        if not await self.store.first_use(claims.token_id, action.action_key, use_id):
            raise RejectedError(REPLAYED, "the action token was already used by another send")

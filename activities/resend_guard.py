"""The reconciler's keyed resend checks the approval's binding again (ADR 0049).

Between an unknown write and the one resend a key-deduplicating target allows, the lookup
window passes (minutes): a draft may be altered in PostgreSQL, an approval withdrawn, a consent
revoked. The resend is the same send as the unknown write, so it is held to the same binding as
the send step (``TokenGuard``): the token's signature and scope, with the fingerprint
recomputed from the draft PostgreSQL holds now, the approval on record, consent at the source.

What differs is the use rule. The send step took the token's single use under its own id
(``{event workflow id}/{send's transition number}``); the resend presents that token again
and is admitted only when that very use holds it for this action key. It takes no new use, so
the token still goes out once at most, and nothing else can borrow the rule: another send
carries another transition number, another event another workflow id. Expiry is not judged
again: the use began in time (the send step checked it) and the resend continues it, as a
retry does.

A replay an operator approved (`tollgate ops dlq approve`, role-checked and audited) carries no
token: the dead letter never stores one (it is a bearer credential). Its authority is that
approval; consent is still checked at the source.
"""

from __future__ import annotations

from activities.action_token import REFUSALS, REPLAYED, fingerprint_of
from adapters.ports.stores.sending import ResendChecks
from adapters.ports.targets import ContextSource
from contracts import ReconcileRequest
from policies.action_token import check_continuation

NO_CONSENT = "no_consent_at_send"
NO_APPROVAL = "no_approval_on_record"


class ResendGuard:
    def __init__(self, store: ResendChecks, source: ContextSource, key: bytes) -> None:
        self.store = store
        self.source = source
        self.key = key

    async def refusal(self, request: ReconcileRequest) -> str | None:
        """None when the resend may call the target; else the code it is refused with, in the
        send step's order: token (signature, scope, use), consent, approval."""
        action, ref = request.action, request.ref
        if request.action_token is None or request.draft_version is None \
                or request.send_seq is None:
            if request.replay_of is None:
                # A reconciliation started before this check (or a hand-made request):
                # nothing binds it to an approval, so it goes to an operator.
                return REFUSALS["token_missing"]
            return await self._consent(request)
        approved, body = await self.store.approved_draft(ref.workflow_id, request.draft_version)
        claims = check_continuation(request.action_token, key=self.key,
                                    action_key=action.action_key,
                                    fingerprint=fingerprint_of(action, body or ""))
        if isinstance(claims, str):
            return REFUSALS[claims]
        if not await self.store.used_by(claims.token_id, action.action_key,
                                        f"{ref.workflow_id}/{request.send_seq}"):
            return REPLAYED
        refused = await self._consent(request)
        if refused is None and not approved:
            return NO_APPROVAL
        return refused

    async def _consent(self, request: ReconcileRequest) -> str | None:
        ref = request.ref
        record = await self.source.fetch_customer(ref.tenant_id, ref.entity_id)
        return None if record is not None and record.consent_messaging else NO_CONSENT

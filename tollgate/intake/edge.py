"""What the producer's side refuses before an event goes anywhere near its business key.

``submit()`` (so ``tollgate submit``, ``starter.py`` and the HTTP relay) asks ``refusal_of``
first. A refused event never takes ``event/{tenant}/{key}``: it goes to its quarantine workflow
id (a hash of its text) as an ``IntakeRequest`` without its text, carrying the reason, so a
hostile string never enters history and an unsigned delivery never learns the key's live
state nor burns the key (ADR 0032). The workflow's own validation stays the authority for
everything else.
"""

from __future__ import annotations

from collections.abc import Mapping

from contracts.events import MAX_EVENT_CHARS, IntakeRefusal
from policies import edge_text, signing

#: Reason codes for the text rules; the rest keep the rule's own name. A byte order mark is
#: malformed JSON to whoever groups refusals by reason (RFC 8259: not to be sent); its rule
#: and message name it (docs/api.md, "Refused text").
_REASON = {"not_json": "malformed_json", "byte_order_mark": "malformed_json"}


def refusal_for(violation: edge_text.Violation) -> IntakeRefusal:
    return IntakeRefusal(reason_code=_REASON.get(violation.rule, violation.rule),
                         message=violation.message)


def text_refusal(raw: str) -> IntakeRefusal | None:
    """The text rules alone (what the HTTP intake, which checks signatures itself, asks)."""
    if len(raw) > MAX_EVENT_CHARS:
        return None  # travels as its length only and is quarantined ``too_large``
    _, violation = edge_text.load_json(raw, max_chars=MAX_EVENT_CHARS)
    if violation is None:
        return None
    if violation.rule == "not_json":
        # The workflow quarantines it as ``malformed_json``, text and all, unless the text
        # cannot even be encoded to travel.
        bad = edge_text.check_string(raw, "$", max_chars=MAX_EVENT_CHARS)
        return refusal_for(bad) if bad is not None and bad.rule == "lone_surrogate" else None
    return refusal_for(violation)


def refusal_of(raw: str, tenant_secrets: Mapping[str, str] | None = None
               ) -> IntakeRefusal | None:
    """Why ``raw`` must not reach its key's workflow, or None. With the tenants' keys the
    envelope signature is verified here too; without them only its presence is."""
    found = text_refusal(raw)
    if found is not None or len(raw) > MAX_EVENT_CHARS:
        return found
    data, _ = edge_text.load_json(raw, max_chars=MAX_EVENT_CHARS)
    if not isinstance(data, dict):
        return None
    if not isinstance(data.get("signature"), str) or not data["signature"]:
        return IntakeRefusal(reason_code="signature_missing",
                             message="$.signature: the event is not signed (unsigned events "
                                     "are refused, as over HTTP)")
    if tenant_secrets is None:
        return None
    tenant = data.get("tenant_id")
    secret = tenant_secrets.get(tenant) if isinstance(tenant, str) else None
    if secret is None:
        return IntakeRefusal(reason_code="unknown_tenant",
                             message="$.tenant_id: not a known tenant")
    if not signing.verify(data, secret):
        return IntakeRefusal(reason_code="bad_signature",
                             message="$.signature: does not match the tenant's key")
    return None

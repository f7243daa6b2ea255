"""The gate between a model's draft and a reviewer. Pure: no I/O, callable from a workflow.

Every check yields a ``Flag``: a loggable ``finding`` code (``code`` or ``code:detail``, where
the detail is only ever a source-ref key or a fixed word), the named ``rule`` that matched,
the ``source`` field and the original ``span`` (for the reviewer, never for a log line). The
policy's ``stop_flags`` say which findings stop the event; every other flag travels with the
draft to the reviewer (docs/drafting.md has the long version):

    unknown_source_ref:<ref>   a cited fact the model was not given (it made it up)
    link_not_allowed           a link the action's shape does not allow, or a host off its
                               allowlist, or a markdown link (its text hides its target)
    secret_like:<kind>         API keys, tokens, passwords, private keys, card numbers
    foreign_pii:<kind>         e-mails/phones the shape does not allow, a greeting to someone else
    customer_contact:<kind>    the customer's own phone/e-mail/address, unless the rule asks
    tenant_contact:<kind>      the tenant's own phone/e-mail (``request.tenant_contacts``) where
                               the shape allows no phone/e-mail at all: never foreign, but the
                               reviewer sees it (ADR 0039); where the shape allows the kind, the
                               tenant's own points pass as if on the allowlist, and its domains
                               count as allowed hosts for links
    too_long                   over the shape's ``max_length``
    echo_untrusted:<ref>       the draft repeats an untrusted fact at length (names excepted)
    injection_in_output        text aimed at a model, a tool or a reviewer inside the draft
    injection_in_context:<k>   the same inside a context fact
    link_in_context:<k>        a link in a context fact that the allowlist does not cover
    contact_in_name:<k>        a phone number or e-mail typed into a name field
    secret_in_context:<k>      a credential in a context fact: the model must never see one
    tool_call                  tool/function-call shapes in the draft
    action_claim               "we have booked/sent/charged": only code says an action happened
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from contracts import Draft, DraftRequest, Flag, OutputShape, PolicyRule
from contracts.contacts import TenantContact, phone_key, same_phone
from policies import sensitive
from policies.injection_rules import match_rules
from policies.normalise import fold, fold_text
from policies.sensitive import redact
from policies.taint import (
    CONTACT_FIELDS,
    NAME_FIELDS,
    echoed_span,
    is_untrusted,
    looks_like_name,
)

__all__ = ["inspect_draft", "scan_context", "scan_context_for_injection", "stopping",
           "validate_draft"]

_REF = re.compile(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+){1,4}")
_ACTION_CLAIM = re.compile(
    r"\b(?:i|we)(?:\s+have|'ve)?\s+(?:already\s+)?(?:booked|scheduled|cancell?ed|charged|"
    r"refunded|sent|paid|confirmed|rescheduled)\s+(?:your|the|an?|it|this|\w+'s)\b"
    r"|\b(?:appointment|booking|visit|payment|refund|order)\s+(?:is|has\s+been|was)\s+"
    r"(?:now\s+)?(?:confirmed|booked|scheduled|processed|completed|cancell?ed|paid)\b"
)
_GREETING = re.compile(
    r"^\W*(?i:hi|hello|hey|dear|good\s+(?:morning|afternoon|evening)|xin\s+chao|chao),?"
    r"(?:\s+(?i:anh|chi|em|ban|co|chu|mr\.?|ms\.?|mrs\.?))?\s+([A-Z][\w'-]*)"
)
_NOT_NAMES = frozenset({"there", "team", "friend", "friends", "valued", "customer", "pet", "sir"})
#: The shape of a request built before release 2026-12-01: the worker's allowlists decide.
_LEGACY_SHAPE = OutputShape(links=True, phone_numbers=True, email_addresses=True,
                            customer_contact=True)


def scan_context(context: dict[str, str], *, allowlist: Iterable[str] = ()) -> list[Flag]:
    """Flags for context facts that carry instructions, links, credentials or contact data
    where a name belongs (keys sorted, so the order is stable)."""
    allowed = frozenset(a.lower() for a in allowlist)
    flags: list[Flag] = []
    for key in sorted(context):
        value, ref = context[key], _safe_ref(key)
        for rule, span in match_rules(fold(value)):
            flags.append(Flag(finding=f"injection_in_context:{ref}", rule=rule, source=ref,
                              span=redact(span)))
        for url in sensitive.links(value):
            if not sensitive.host_allowed(url, allowed):
                flags.append(Flag(finding=f"link_in_context:{ref}", rule="link", source=ref,
                                  span=redact(url)))
        markdown = sensitive.MARKDOWN_LINK.search(value)
        if markdown:
            flags.append(Flag(finding=f"link_in_context:{ref}", rule="markdown_link",
                              source=ref, span=markdown.group()[:160]))
        if key in NAME_FIELDS and (sensitive.emails(value) or sensitive.phones(value)):
            flags.append(Flag(finding=f"contact_in_name:{ref}", rule="contact_in_name",
                              source=ref, span=redact(value)[:160]))
        for kind in sensitive.secret_kinds(value):
            flags.append(Flag(finding=f"secret_in_context:{ref}", rule=kind, source=ref,
                              span=f"[{kind}]"))
    return _unique(flags)


def scan_context_for_injection(context: dict[str, str]) -> list[str]:
    """The finding codes of ``scan_context``, each once, in key order."""
    return list(dict.fromkeys(f.finding for f in scan_context(context)))


def inspect_draft(
    draft: Draft,
    request: DraftRequest,
    *,
    link_allowlist: frozenset[str] = frozenset(),
    recipient_allowlist: frozenset[str] = frozenset(),
) -> list[Flag]:
    """Every flag for a parsed draft against the request it answers. Empty list = clean.

    Args:
        link_allowlist, recipient_allowlist: the worker's allowlists, added to the allowlist of
            the action's output shape (``request.rule.output``); with no shape (a rule from
            before 2026-12-01) links, phones and e-mails are allowed when on these lists.
    """
    shape = request.rule.output if request.rule and request.rule.output else _LEGACY_SHAPE
    allowed = frozenset(a.lower() for a in (*shape.allowlist, *link_allowlist,
                                            *recipient_allowlist))
    own = request.tenant_contacts
    hosts = allowed | {c.key for c in own if c.kind == "domain"}
    flags = [
        Flag(finding=f"unknown_source_ref:{_safe_ref(ref)}", rule="unknown_source_ref",
             source="draft.source_refs", span=_safe_ref(ref))
        for ref in dict.fromkeys(draft.source_refs)
        if ref not in request.context
    ]
    fields = {"draft.message": draft.message, "draft.reason": draft.reason,
              **{f"draft.unknowns.{i}": u for i, u in enumerate(draft.unknowns)}}
    for source, text in fields.items():
        if text:
            flags += _text_flags(text, source, shape, hosts)
    flags += _contact_flags(draft.message, request.context, shape, allowed, own)
    if len(draft.message) > shape.max_length:
        flags.append(Flag(finding="too_long", rule="max_length", source="draft.message",
                          span=f"{len(draft.message)} > {shape.max_length} characters"))
    flags += _echo_flags(draft, request.context)
    return _unique(flags)


def validate_draft(
    draft: Draft,
    request: DraftRequest,
    *,
    link_allowlist: frozenset[str] = frozenset(),
    recipient_allowlist: frozenset[str] = frozenset(),
) -> list[str]:
    """The finding codes of ``inspect_draft``, each once. Empty list = ok."""
    flags = inspect_draft(draft, request, link_allowlist=link_allowlist,
                          recipient_allowlist=recipient_allowlist)
    return list(dict.fromkeys(f.finding for f in flags))


def stopping(flags: Iterable[Flag], rule: PolicyRule | None) -> list[str]:
    """The findings among ``flags`` that stop the event under ``rule`` (all of them when the
    rule predates ``stop_flags``)."""
    codes = list(dict.fromkeys(f.finding for f in flags))
    if rule is None or rule.stop_flags is None:
        return codes
    return [c for c in codes if c.split(":", 1)[0] in rule.stop_flags]


def _text_flags(text: str, source: str, shape: OutputShape, allowed: frozenset[str]) -> list[Flag]:
    flags = [Flag(finding=f"secret_like:{kind}", rule=kind, source=source, span=f"[{kind}]")
             for kind in sensitive.secret_kinds(text)]
    for rule, span in match_rules(fold(text)):
        finding = "tool_call" if rule == "tool_call_shape" else "injection_in_output"
        flags.append(Flag(finding=finding, rule=rule, source=source, span=redact(span)))
    for url in sensitive.links(text):
        if not shape.links or not sensitive.host_allowed(url, allowed):
            flags.append(Flag(finding="link_not_allowed", rule="link", source=source,
                              span=redact(url)))
    markdown = sensitive.MARKDOWN_LINK.search(text)
    if markdown:
        flags.append(Flag(finding="link_not_allowed", rule="markdown_link", source=source,
                          span=markdown.group()[:160]))
    claim = _ACTION_CLAIM.search(fold_text(text))
    if claim:
        flags.append(Flag(finding="action_claim", rule="action_claim", source=source,
                          span=claim.group()))
    return flags


def _contact_flags(
    message: str, context: dict[str, str], shape: OutputShape, allowed: frozenset[str],
    tenant: tuple[TenantContact, ...] = (),
) -> list[Flag]:
    own = {kind: context.get(key, "") for key, kind in CONTACT_FIELDS.items()}
    tenant_emails = {c.key for c in tenant if c.kind == "email"}
    tenant_phones = [c.key for c in tenant if c.kind == "phone"]
    flags = []

    def flag(finding: str, rule: str, span: str) -> None:
        flags.append(Flag(finding=finding, rule=rule, source="draft.message", span=span))

    allowed_digits = {sensitive.digits(a) for a in allowed if sensitive.is_phone(a)}
    for email in sensitive.emails(message):
        if own["email"] and email.lower() == own["email"].strip().lower():
            if not shape.customer_contact:
                flag("customer_contact:email", "customer_contact", email)
        elif email.lower() in tenant_emails:
            if not shape.email_addresses:
                flag("tenant_contact:email", "email_not_in_shape", email)
        elif not shape.email_addresses or email.lower() not in allowed:
            flag("foreign_pii:email", "email_not_allowed", email)
    for phone in sensitive.phones(message):
        number = sensitive.digits(phone)
        if own["phone"] and number == sensitive.digits(own["phone"]):
            if not shape.customer_contact:
                flag("customer_contact:phone", "customer_contact", phone.strip())
        elif _is_tenant_phone(phone, tenant_phones):
            if not shape.phone_numbers:
                flag("tenant_contact:phone", "phone_not_in_shape", phone.strip())
        elif not shape.phone_numbers or number not in allowed_digits:
            flag("foreign_pii:phone", "phone_not_allowed", phone.strip())
    address = own["address"].strip()
    if address and not shape.customer_contact and echoed_span(message, address, 3):
        flag("customer_contact:address", "customer_contact", address[:160])
    greeted = _GREETING.match(fold(message, casefold=False).text)
    if greeted and "crm.first_name" in context:
        name = fold_text(greeted.group(1)).removesuffix("'s")
        if name not in fold_text(" ".join(context.values())) and name not in _NOT_NAMES:
            flag("foreign_pii:name", "greeting_name", greeted.group(1))
    return flags


def _is_tenant_phone(phone: str, keys: list[str]) -> bool:
    found = phone_key(phone)
    return found is not None and any(same_phone(found, key) for key in keys)


def _echo_flags(draft: Draft, context: dict[str, str]) -> list[Flag]:
    flags = []
    for key in sorted(context):
        value = context[key]
        if not is_untrusted(key) or (key in NAME_FIELDS and looks_like_name(value)):
            continue
        for source, text in (("draft.message", draft.message), ("draft.reason", draft.reason)):
            span = echoed_span(text, value)
            if span:
                flags.append(Flag(finding=f"echo_untrusted:{_safe_ref(key)}",
                                  rule="echo_untrusted", source=source, span=redact(span)))
    return flags


def _unique(flags: list[Flag]) -> list[Flag]:
    """One flag per (finding, rule, source); every span masked of secrets and contact data,
    since spans are stored with the workflow and shown on screen."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in flags:
        if (f.finding, f.rule, f.source) not in seen:
            seen.add((f.finding, f.rule, f.source))
            out.append(f.model_copy(update={"span": redact(f.span)[:200]}))
    return out


def _safe_ref(ref: str) -> str:
    return ref if _REF.fullmatch(ref) and len(ref) <= 64 else "_invalid"

"""What a reviewer sees of the facts behind a draft, and of the rule that routed it. Pure.

The ``review_ticket`` query builds both inside the workflow, so a masked value is masked in
every place that shows it (inbox, API, ``tollgate review show``) and the raw contact data
never leaves the run. Names stay readable: the reviewer checks "Hi Lan" against ``Lan``.
Contact fields show only enough to recognise them; any other value has its secrets, card
numbers, e-mail addresses and phone numbers masked (``policies.sensitive.redact``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from contracts.policy import PolicyRule
from contracts.review import Evidence, ReviewRoute
from policies.sensitive import EMAIL, digits, redact

#: Contact fields: the reviewer sees that the fact is there and which one it is, not all of it.
_CONTACT = frozenset({"phone", "email", "address"})


def mask_value(field: str, value: str) -> tuple[str, bool]:
    """The value as a reviewer may see it, and whether anything was hidden."""
    if field == "phone":
        number = digits(value)
        return f"••• {number[-3:]}" if len(number) > 3 else "•••", True
    if field == "email":
        found = EMAIL.search(value)
        domain = found.group().rsplit("@", 1)[-1] if found else "?"
        return f"•••@{domain}", True
    if field == "address":
        return f"[address, {len(value)} characters]", True
    shown = redact(value)
    return shown, shown != value


def cited_evidence(
    refs: Iterable[str], context: Mapping[str, str], *, fetched_at: datetime | None,
    source_updated_at: datetime | None, max_age: timedelta | None, event_source: str | None,
) -> list[Evidence]:
    """One entry per cited ref, in the draft's order, each with its masked value and origin.

    Args:
        fetched_at: when the run read the context source (the workflow's clock).
        source_updated_at: the source record's own ``updated_at``.
        max_age: the policy's ``max_context_age``.
        event_source: the producer that sent the event (``event.*`` facts come from it).
    """
    out: list[Evidence] = []
    for ref in dict.fromkeys(refs):
        source, _, field = ref.partition(".")
        raw = context.get(ref)
        value, masked = mask_value(field, raw) if raw is not None else (None, False)
        if source == "event":
            out.append(Evidence(ref=ref, source="event", field=field, value=value, masked=masked,
                                origin=f"event from {event_source or 'the producer'}",
                                freshness="as sent in the event"))
            continue
        out.append(Evidence(
            ref=ref, source=source, field=field, value=value, masked=masked,
            origin="CRM customer record" if source == "crm" else source,
            fetched_at=fetched_at, source_updated_at=source_updated_at,
            freshness=freshness(fetched_at, source_updated_at, max_age),
        ))
    return out


def freshness(fetched_at: datetime | None, updated_at: datetime | None,
              max_age: timedelta | None) -> str:
    """"fresh: updated 3h before it was read (the policy allows 1d)", or why it is unknown."""
    if fetched_at is None or updated_at is None:
        return "age unknown (read before this was recorded)"
    age = max(fetched_at - updated_at, timedelta(0))
    verdict = "fresh" if max_age is None or age <= max_age else "stale"
    allows = f" (the policy allows {span(max_age)})" if max_age is not None else ""
    return f"{verdict}: updated {span(age)} before it was read{allows}"


def span(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    if days:
        return f"{days}d {hours}h" if hours else f"{days}d"
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    return f"{minutes}m"


def review_route(rule: PolicyRule, *, reason_code: str | None, sends_today: int | None,
                 info_rounds: int, escalated: bool) -> ReviewRoute:
    """The rule that routed the review: who may approve, what the daily limit leaves, consent,
    who is told at the SLA and how many more rounds of questions the policy allows."""
    consent = ("given at the source when read (checked again before sending)"
               if rule.consent_required else "not required by the policy")
    limit = rule.max_messages_per_customer_per_day
    return ReviewRoute(
        rule=f"{rule.adapter}.{rule.action}", approver_roles=list(rule.approver_roles),
        reason_code=reason_code, consent=consent, sends_today=sends_today, daily_limit=limit,
        sends_left_today=max(limit - sends_today, 0) if sends_today is not None else None,
        fallback_owner=rule.fallback_owner, escalated=escalated,
        info_rounds_left=max(rule.max_info_rounds - info_rounds, 0),
    )

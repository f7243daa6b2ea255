"""The evidence part of ``tollgate review show``: cited facts with their values and origin, the
rule that routed the review and who gets it next, the word diff against the version before,
and the validator's flags (from the workflow, or from PostgreSQL once the event has ended).

Values come masked from the workflow's ``review_ticket`` query (``policies.evidence``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from contracts import ReviewTicket


def print_route(ticket: ReviewTicket | None, *, open_review: bool = True) -> None:
    """The rule that routed the review; who gets it at the SLA only while it is open (a
    finished event's ticket still carries its route, and "next: … at the SLA" under
    SUCCEEDED or STOPPED reads as a review still to come)."""
    route = ticket.route if ticket else None
    if route is None:
        return
    escalated = " (SLA passed: escalated)" if route.escalated else ""
    if open_review:
        click.echo(f"  next: {route.fallback_owner} at the SLA{escalated}")
    left = "?" if route.sends_left_today is None else route.sends_left_today
    routed = f" · routed for {route.reason_code}" if route.reason_code else ""
    click.echo(f"  rule {route.rule} · approvers {', '.join(route.approver_roles)}{routed}")
    click.echo(f"  sends left today {left} of {route.daily_limit} · consent {route.consent}"
               f" · questions left {route.info_rounds_left}")


def print_evidence(ticket: ReviewTicket | None) -> bool:
    """Each cited fact on its own line; False when the ticket has none (an older worker, or a
    finished event), so the caller prints the bare source refs instead."""
    if ticket is None or not ticket.evidence:
        return False
    click.echo("  evidence:")
    for e in ticket.evidence:
        value = "(not in the context)" if e.value is None else repr(e.value)
        masked = " (masked)" if e.masked else ""
        read = f" · read {e.fetched_at:%Y-%m-%d %H:%M} UTC" if e.fetched_at else ""
        click.echo(f"    {e.ref} = {value}{masked}")
        click.echo(f"      {e.origin} · field {e.field}{read} · {e.freshness}")
    return True


def print_diff(ticket: ReviewTicket | None) -> None:
    from policies.word_diff import as_text, changed, word_diff

    if ticket is None or ticket.previous_message is None or ticket.draft is None:
        return
    pieces = word_diff(ticket.previous_message, ticket.draft.message)
    if ticket.answering:
        click.echo(f"  you asked: {ticket.answering!r}")
    if not changed(pieces):
        click.echo(f"  changes from v{ticket.previous_version}: none (the message is the same)")
        return
    click.echo(f"  changes from v{ticket.previous_version}: {as_text(pieces)}")


def print_flags(ticket: ReviewTicket | None, row: dict[str, Any] | None) -> None:
    """Each flag with its rule, where it was found and the text that tripped it. A flag is a
    warning for the reviewer: it approves nothing and sends nothing."""
    flags = ([f.model_dump() for f in ticket.flags] if ticket and ticket.flags
             else list((row or {}).get("flags") or []))
    if not flags:
        return
    click.echo(f"  FLAGGED: {len(flags)} thing(s) need your eyes")
    for f in flags:
        click.echo(f"  ! {f['finding']} · rule {f['rule']} · from {f['source']}: "
                   f"{f.get('span', '')!r}")

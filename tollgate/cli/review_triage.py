"""How `tollgate review show` prints a triage proposal (docs/triage.md): the draft of a
``MESSAGE_RECEIVED`` event is the helpdesk assignment as canonical JSON, which the reviewer
reads as what will happen: the ticket, the queue, the intent and the reply, if any."""

from __future__ import annotations

import click

from contracts.triage import Assignment


def print_message(message: str) -> None:
    """A care reminder's text as it is; an assignment spelled out."""
    assignment = Assignment.read(message)
    if assignment is None:
        click.echo(f"  {message}")
        return
    click.echo(f"  assign ticket {assignment.ticket_ref} to {assignment.queue} "
               f"(intent {assignment.intent})")
    if assignment.reply:
        click.echo(f"  reply to the customer: {assignment.reply}")
    else:
        click.echo("  reply to the customer: none")

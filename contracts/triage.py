"""Triage, the second action domain (issue 32, ADR 0044): an inbound message or ticket event,
what the model proposes about it, what the policy allows, and the assignment sent to the
helpdesk.

The event (``MESSAGE_RECEIVED`` v1) goes through the same seven steps as a care reminder. The
model's proposal (``TriageProposal``) is a claim per field, each with the source refs it rests
on; the validator (``policies/triage.py``) refuses a route off the policy's list, an unknown ref
or a reply that breaks the output policy. What the helpdesk is asked to do is ``Assignment``,
sent as canonical JSON: that text is what the reviewer (or the policy) approves and what the
action token's fingerprint covers.
"""

from __future__ import annotations

import json
from typing import Annotated, Literal

from pydantic import AwareDatetime, Field, StringConstraints, ValidationError

from contracts.base import ID_PATTERN, Frozen

#: The event type that takes the triage path through ``ProcessEventWorkflow``.
MESSAGE_RECEIVED = "MESSAGE_RECEIVED"
#: The ``ActionRequest.channel`` of an assignment: the reply, if any, goes out on the ticket.
TICKET_CHANNEL = "ticket"

#: The ``FieldIssue.field`` naming a reviewer's question no context fact answers: a proposal
#: lists it under ``missing``, so the reviewer sees it among the unknowns.
REVIEWER_QUESTION = "reviewer_question"

Code = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Ref = Annotated[str, StringConstraints(max_length=80)]
Refs = Annotated[list[Ref], Field(max_length=12)]
ShortId = Annotated[str, StringConstraints(pattern=ID_PATTERN)]


class MessageReceivedV1(Frozen):
    """One inbound customer message (chat inbox, fan page, shop, e-mail) or ticket update.

    ``thread_id`` is the helpdesk ticket or conversation the message belongs to; the customer is
    the envelope's ``entity_id`` and ``customer_id`` here. ``body`` and ``subject`` are typed by
    the customer: the model reads them as quoted data, the validator scans them."""

    customer_id: ShortId
    channel: Literal["chat", "email", "fanpage", "shop", "sms", "phone"]
    thread_id: ShortId
    subject: Annotated[str, StringConstraints(max_length=200)] | None = None
    body: Annotated[str, StringConstraints(min_length=1, max_length=4000)]
    order_id: ShortId | None = None
    sender_name: Annotated[str, StringConstraints(max_length=100)] | None = None
    sent_at: AwareDatetime | None = None


class TriageRule(Frozen):
    """What a policy rule says about triage (``PolicyRule.triage``).

    ``routes``: the teams or queues a ticket may be assigned to; a proposal naming any other is
    refused. ``intents``: the intents the model may name. ``auto_route_intents``: those whose
    ticket may be assigned with no reviewer, and only when the proposal has no reply draft, no
    conflicting or missing field and no validator flag. A reply to the customer always waits
    for a reviewer, whatever this says."""

    routes: Annotated[tuple[Code, ...], Field(min_length=1)]
    intents: Annotated[tuple[Code, ...], Field(min_length=1)]
    auto_route_intents: tuple[Code, ...] = ()


class Claim(Frozen):
    """One proposed value and the context facts it rests on."""

    value: Code
    source_refs: Refs = Field(default_factory=list)


class FieldIssue(Frozen):
    """A field the message and the record disagree on (conflict), or one the request needs and
    nobody gave (missing); ``source_refs`` are where the model looked."""

    field: Code
    source_refs: Refs = Field(default_factory=list)
    note: Annotated[str, StringConstraints(max_length=200)] = ""


class ReplyDraft(Frozen):
    """An optional answer to the customer: never sent without a reviewer's approval."""

    message: Annotated[str, StringConstraints(max_length=1000)]
    source_refs: Refs = Field(default_factory=list)


class TriageProposal(Frozen):
    """What the model must return: handed to it as this model's JSON schema. ``confidence`` is
    recorded and decides nothing."""

    intent: Claim
    route: Claim
    conflicts: Annotated[list[FieldIssue], Field(max_length=10)] = Field(default_factory=list)
    missing: Annotated[list[FieldIssue], Field(max_length=10)] = Field(default_factory=list)
    reply: ReplyDraft | None = None
    reason: Annotated[str, StringConstraints(max_length=500)] = ""
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class Assignment(Frozen):
    """What the helpdesk is asked to do for one event: assign ``ticket_ref`` to ``queue`` and,
    when a reviewer approved one, post ``reply`` on it."""

    ticket_ref: ShortId
    queue: Code
    intent: Code
    reply: Annotated[str, StringConstraints(max_length=1000)] | None = None

    @classmethod
    def read(cls, text: str | None) -> Assignment | None:
        """The assignment a draft's message holds; None for any other draft (a reminder)."""
        if not text or not text.startswith("{"):
            return None
        try:
            return cls.model_validate_json(text)
        except ValidationError:
            return None

    def body(self) -> str:
        """Canonical JSON (sorted keys, no spaces): the same assignment is always the same text,
        so the token's fingerprint and the receipt's request fingerprint are stable."""
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)

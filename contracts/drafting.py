"""Steps 3-4: the context a draft may use, the draft itself and the validator's verdict."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from contracts.base import EventRef, Frozen
from contracts.contacts import MAX_CONTACTS_PER_TENANT, TenantContact
from contracts.policy import PolicyRule, PolicySnapshot
from contracts.triage import TriageProposal

#: At most this many request-info questions in one review (``PolicyRule.max_info_rounds`` is
#: at most 10), so a ``DraftRequest`` carries every one of them.
MAX_REVIEWER_NOTES = 10

#: The draft activity's attempts. The workflow's retry policy stops there, and the activity,
#: on that last attempt, hands an unreadable answer to a reviewer (status ``unreadable``)
#: instead of failing again: both sides must read the same number, so it lives here.
DRAFT_MAX_ATTEMPTS = 3


class CustomerRecord(Frozen):
    """The minimal record a context source returns (adapters.ports.targets.ContextSource)."""

    tenant_id: str
    customer_id: str
    first_name: str
    locale: str = "en"
    pet_name: str | None = None
    consent_messaging: bool
    updated_at: AwareDatetime
    # Free text and contact data: read only when the action's policy names them
    # (``PolicyRule.context_fields``); everything here was typed by a person, so it is untrusted.
    notes: str | None = None
    phone: str | None = None
    email: str | None = None
    address: str | None = None


class ContextRequest(Frozen):
    ref: EventRef
    payload: dict[str, Any]
    policy: PolicySnapshot
    seq: int


class ContextResult(Frozen):
    status: Literal["ready", "stopped"]
    fields: dict[str, str] = Field(default_factory=dict)
    updated_at: datetime | None = None
    reason_code: str | None = None
    #: The tenant's own contact points, for the draft's validator (ADR 0039).
    tenant_contacts: tuple[TenantContact, ...] = Field(default=(),
                                                       max_length=MAX_CONTACTS_PER_TENANT)


class Draft(Frozen):
    """What the model must return: a proposal, never an action. Handed to the model as the JSON
    schema of the structured output. ``confidence`` is recorded and changes no state."""

    message: Annotated[str, StringConstraints(max_length=1000)]
    source_refs: list[str] = Field(default_factory=list, max_length=20)
    unknowns: list[str] = Field(default_factory=list, max_length=20)
    reason: Annotated[str, StringConstraints(max_length=500)] = ""
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] | None = None


class DraftRequest(Frozen):
    """``context`` holds the only facts the model may use, keyed by source ref
    (``crm.first_name``, ``event.due_at``); a draft citing any other ref is invalid."""

    ref: EventRef
    context: dict[str, str]
    policy_version: str
    prompt_version: str
    version: int = 1
    #: The latest request-info question (a request built before 2026-12-02 carries only this).
    reviewer_note: str | None = None
    #: Every request-info question of this review, oldest first, the latest included: each
    #: version answers all of them or names each it cannot (issue 28 item 2).
    reviewer_notes: tuple[str, ...] = Field(default=(), max_length=MAX_REVIEWER_NOTES)
    #: The action's rule: what the message may contain and which flags stop the event. None
    #: for a request built before release 2026-12-01 (the worker's allowlists apply).
    rule: PolicyRule | None = None
    #: The tenant's own contact points (its hotline, its site), read by the context step: the
    #: validator never counts them as foreign (ADR 0039). Empty in a request built before.
    tenant_contacts: tuple[TenantContact, ...] = Field(default=(),
                                                       max_length=MAX_CONTACTS_PER_TENANT)


    def questions(self) -> tuple[str, ...]:
        """The reviewer's questions in order; an older request's single note as a one-tuple."""
        if self.reviewer_notes:
            return self.reviewer_notes
        return (self.reviewer_note,) if self.reviewer_note else ()


class Flag(Frozen):
    """One thing the validator wants a reviewer to look at.

    ``finding`` is the loggable code (``injection_in_context:crm.notes``); ``rule`` the named
    check that matched (``role_marker``, ``echo_untrusted``); ``source`` where the span was
    found (``draft.message``, ``crm.notes``); ``span`` the original text behind the match,
    cut short and with secrets masked. The span is customer text: it goes to the reviewer and
    the store, never to a log line.
    """

    finding: Annotated[str, StringConstraints(max_length=100)]
    rule: Annotated[str, StringConstraints(max_length=64)]
    source: Annotated[str, StringConstraints(max_length=80)]
    span: Annotated[str, StringConstraints(max_length=200)] = ""


class DraftResult(Frozen):
    """``unreadable``: the last allowed attempt still could not be parsed; the record goes to a
    reviewer with ``raw_excerpt`` (redacted). ``failed_validation``: readable but refused by the
    validator (``findings`` say why)."""

    status: Literal["drafted", "failed_validation", "unreadable"]
    version: int
    draft: Draft | None = None
    provider: str
    model: str
    prompt_version: str
    findings: list[str] = Field(default_factory=list)
    raw_excerpt: str | None = None
    #: Every flag with its span; a ``drafted`` result may carry flags that do not stop the
    #: event (the policy's ``stop_flags`` decide), and the reviewer sees each of them.
    flags: list[Flag] = Field(default_factory=list)
    #: A triage event's proposal as the model made it (``draft`` then holds the assignment it
    #: asks for: contracts/triage.py); None for every other event type.
    triage: TriageProposal | None = None


class DraftPrompt(Frozen):
    """What a model port is handed: the rendered messages and the JSON schema of ``Draft``.

    The activity renders it (``policies.prompts.build_prompt``), so a provider only translates
    it into its own wire format. ``request`` travels along for the offline drafter, which builds
    its template from the facts rather than from the prose.
    """

    system: str
    user: str
    json_schema: dict[str, Any]
    prompt_version: str
    request: DraftRequest

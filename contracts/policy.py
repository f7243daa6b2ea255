"""The policy types a workflow carries: one rule for one (tenant, event type) and its version.

The matrix that holds many rules, and the code that reads it from disk, live in
``policies/matrix.py``; these types sit here so that every layer can name a rule.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    model_validator,
)

from contracts.base import EVENT_TYPE_PATTERN, ID_BODY, Frozen
from contracts.triage import TriageRule

# Weeks, days, hours, minutes, seconds only: years and months have no fixed length, and a bare
# number would leave the reader guessing whether it meant seconds or minutes.
_ISO_DURATION = re.compile(r"^P(?=\d|T\d)(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$")


def _iso_duration(value: object) -> object:
    if isinstance(value, timedelta):
        return value
    if isinstance(value, str) and _ISO_DURATION.fullmatch(value):
        return value
    raise ValueError("must be an ISO-8601 duration string such as PT4H, P1D or PT1H30M")


def _positive(value: timedelta) -> timedelta:
    if value <= timedelta(0):
        raise ValueError("must be longer than zero")
    return value


#: A span of time, written in the JSON as an ISO-8601 duration ("PT4H"); pydantic writes it
#: back in the same form, so a snapshot survives Temporal's pydantic data converter unchanged.
Duration = Annotated[timedelta, BeforeValidator(_iso_duration), AfterValidator(_positive)]
Name = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Owner = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._@\-]{0,127}$")]
TenantKey = Annotated[str, StringConstraints(pattern=rf"^(\*|{ID_BODY})$")]
EventType = Annotated[str, StringConstraints(pattern=EVENT_TYPE_PATTERN)]
Version = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}\.[1-9]\d*$")]
Risk = Literal["low", "medium", "high"]
#: A context fact the context step may read: ``crm.<field>`` or ``event.<field>``.
ContextField = Annotated[str, StringConstraints(pattern=r"^(?:crm|event)\.[a-z][a-z0-9_]{0,63}$")]
#: A host ("happypaws.vn"), a phone number or an e-mail address a message may name.
AllowlistEntry = Annotated[str, StringConstraints(min_length=3, max_length=254)]


class OutputShape(Frozen):
    """What one action's message may contain (issue 17). Every kind of content is refused unless
    the shape says yes; an allowed kind still has to name something on ``allowlist`` (the
    clinic's own hotline, its booking site), except the customer's own contact data, which is
    allowed only when ``customer_contact`` is true."""

    max_length: Annotated[StrictInt, Field(ge=1, le=1000)] = 1000
    links: StrictBool = False
    phone_numbers: StrictBool = False
    email_addresses: StrictBool = False
    customer_contact: StrictBool = False
    allowlist: tuple[AllowlistEntry, ...] = ()


class CircuitLimits(Frozen):
    """When the kill switch of a rule's adapter closes by itself for the tenant (issue 11):
    ``unknown_writes`` unknown writes, or ``duplicates`` duplicate signals (a target already
    holding a key Tollgate never sent, a sweep finding a receipt the target lost), counted in
    PostgreSQL within ``window`` and since the switch was last reopened. The defaults are what
    a rule without ``circuit`` gets (docs/policy.md)."""

    unknown_writes: Annotated[StrictInt, Field(ge=1)] = 5
    duplicates: Annotated[StrictInt, Field(ge=1)] = 5
    window: Duration = timedelta(minutes=15)


class PolicyRule(Frozen):
    """What the policy says about one action for one (tenant, event type). Units in
    docs/policy.md. The first thirteen fields are required: a rule is read by auditors, so
    nothing in it is implied. The last three came with release 2026-12-01 and are optional only
    so that the released 2026-11-30 file keeps loading; None means what that file meant
    (the fixed context set, the worker's allowlists, every validator flag stops the event).
    ``tests/policies/test_matrix.py`` requires them in every release from 2026-12-01 on."""

    approver_roles: Annotated[tuple[Name, ...], Field(min_length=1)]
    consent_required: StrictBool
    max_context_age: Duration
    max_messages_per_customer_per_day: Annotated[StrictInt, Field(ge=1)]
    separation_of_duties: StrictBool
    review_sla: Duration
    review_deadline: Duration
    fallback_owner: Owner
    risk: Risk
    max_info_rounds: Annotated[StrictInt, Field(ge=0, le=10)]
    backlog_limit: Annotated[StrictInt, Field(ge=1)]
    adapter: Name
    action: Name
    #: The context facts the context step reads for this action; nothing else is fetched.
    context_fields: tuple[ContextField, ...] | None = None
    #: What the action's message may contain.
    output: OutputShape | None = None
    #: Validator findings (their code, before any ":") that stop the event outright; any other
    #: flag goes to the reviewer with the draft. An empty tuple stops on nothing.
    stop_flags: tuple[Name, ...] | None = None
    #: Monitor thresholds that close the adapter's kill switch; None: ``CircuitLimits()``.
    circuit: CircuitLimits | None = None
    #: The triage domain's routes and what may be auto-routed (``MESSAGE_RECEIVED`` rules,
    #: from release 2026-12-02; ADR 0044); None on every other rule.
    triage: TriageRule | None = None
    #: Whether a newer event for the same entity supersedes an older one still to come (None:
    #: yes, as before release 2026-12-02.3). False for events that never replace one another:
    #: a customer's second order does not cancel the first one's confirmation.
    supersede: StrictBool | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PolicyRule:
        if len(set(self.approver_roles)) != len(self.approver_roles):
            raise ValueError("approver_roles lists a role twice")
        # The SLA escalates to the fallback owner; past the deadline the review expires. An SLA
        # at or past the deadline would expire a review nobody was ever escalated to.
        if self.review_deadline <= self.review_sla:
            raise ValueError("review_deadline must be longer than review_sla")
        return self


class PolicySnapshot(Frozen):
    """The one rule a workflow needs, with the version to stamp on what it decides."""

    version: Version
    rule: PolicyRule

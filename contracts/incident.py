"""Incident summaries (issue 32 item 2, ADR 0046): the redacted packet of evidence an incident
left in PostgreSQL, and the postmortem a model drafts from it.

Every piece of evidence is a ``PacketItem`` with a stable ref (``dl:12``, ``uw:41``,
``q:reason:too_large``, ``ks:3``, ``code:target_504``, ``sum:window``); the postmortem's
sentences cite those refs and the validator (``policies/postmortem.py``) checks every figure a
sentence states against the items it cites. Identifiers and codes only: no payload, no reason
typed by a person, no customer field ever enters a packet.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AwareDatetime, Field, StringConstraints

from contracts.base import Frozen

#: A ref: a kind, a colon, then an id or a code; no spaces or brackets (a sentence cites it as
#: ``[dl:12]``).
REF_PATTERN = r"^[a-z]{1,8}:[A-Za-z0-9._:|*\-]{1,200}$"
Ref = Annotated[str, StringConstraints(pattern=REF_PATTERN)]

ItemKind = Literal[
    "dead_letter", "unknown_write", "circuit_closure", "kill_switch", "quarantine",
    "failed_validation", "replay", "code_group", "version_group", "totals",
]
#: A figure: a count, a duration in seconds, an id number.
Figure = int | float


class PacketItem(Frozen):
    """One piece of evidence, or one group of them (``refs`` names its members).

    ``facts`` holds identifiers and enums only (a workflow id, an adapter, a state, a status);
    ``figures`` the numbers a sentence may state about this item."""

    ref: Ref
    kind: ItemKind
    at: AwareDatetime | None = None
    tenant_id: str | None = None
    code: str | None = None
    policy_version: str | None = None
    prompt_version: str | None = None
    facts: dict[str, str] = Field(default_factory=dict)
    figures: dict[str, Figure] = Field(default_factory=dict)
    refs: list[Ref] = Field(default_factory=list)


class TimelineEntry(Frozen):
    at: AwareDatetime
    ref: Ref
    what: str


class IncidentPacket(Frozen):
    """What one incident window left behind, for one tenant or every tenant (``*``)."""

    since: AwareDatetime
    until: AwareDatetime
    tenant: str
    items: list[PacketItem]
    timeline: list[TimelineEntry]


class PostmortemSentence(Frozen):
    """One sentence and the packet refs it rests on (at least one)."""

    text: Annotated[str, StringConstraints(min_length=1, max_length=600)]
    refs: list[Ref] = Field(default_factory=list, max_length=20)


class Postmortem(Frozen):
    """The model's draft: four sections of cited sentences. It decides nothing."""

    impact: list[PostmortemSentence] = Field(max_length=20)
    timeline: list[PostmortemSentence] = Field(max_length=60)
    suspected_cause: list[PostmortemSentence] = Field(max_length=20)
    open_items: list[PostmortemSentence] = Field(max_length=30)


SECTIONS = ("impact", "timeline", "suspected_cause", "open_items")


class PostmortemPrompt(Frozen):
    """What the model port is handed: rendered messages, the JSON schema of ``Postmortem``, and
    the packet itself (the offline provider writes its summary from the packet, not the prose)."""

    system: str
    user: str
    json_schema: dict[str, object]
    prompt_version: str
    packet: IncidentPacket


class PostmortemFinding(Frozen):
    """Why the validator refuses a draft: a code, the section and sentence number, and what
    (a ref or a figure, never free text)."""

    code: Literal["no_ref", "unknown_ref", "figure_not_in_packet", "personal_data",
                  "empty_section"]
    section: str
    sentence: int
    what: str = ""

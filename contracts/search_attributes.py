"""The search attributes Temporal indexes for every event, named once.

Names and kinds are plain strings here so the dev stack (which registers them) and the CLI
(which writes list queries with them) need no ``temporalio``; the typed ``SearchAttributeKey``s
the workflows set are built from these in ``workflows.search_attributes``.
"""

from __future__ import annotations

from types import MappingProxyType

#: The event's current state (an ``EventState`` value); the UI and `review list` filter on it.
STATE = "TollgateState"
TENANT = "TollgateTenant"
EVENT_TYPE = "TollgateEventType"
#: When the open review's SLA passes; set each time a review opens (``tollgate review list``
#: sorts and shows SLA left by it).
REVIEW_DUE = "TollgateReviewDue"

#: What holds a run that waits for something outside it (a closed kill switch, the gate's review
#: backlog), one value per wake-up key that may release it (``held_by_*`` below); empty once it
#: goes on. Whatever releases the hold lists the runs by its one key and signals ``wake``
#: (``tollgate.ops.wake``); `ops status` and `tollgate trace` show it.
HELD_BY = "TollgateHeldBy"

#: The open review's ticket, ``"<draft_version>:<request_id>"``: what a decision must name, set
#: in the same upsert as AWAITING_REVIEW, so a reviewer that lists the queue decides without a
#: ``review_ticket`` query first (issue 33). Runs from before it carry none: ask the query then.
REVIEW_TICKET = "TollgateReviewTicket"

#: Name -> kind as the Temporal CLI spells it (``--search-attribute NAME=KIND``).
SEARCH_ATTRIBUTES = MappingProxyType({
    STATE: "Keyword", TENANT: "Keyword", EVENT_TYPE: "Keyword", REVIEW_DUE: "Datetime",
    HELD_BY: "KeywordList", REVIEW_TICKET: "Keyword",
})


def review_ticket_value(request_id: str, draft_version: int) -> str:
    """The ``REVIEW_TICKET`` value of one open review."""
    return f"{draft_version}:{request_id}"


def parse_review_ticket(value: object) -> tuple[str, int] | None:
    """``(request_id, draft_version)`` from a ``REVIEW_TICKET`` value; None when there is none or
    it is not one (a list query hands keyword values back as they were set, or as a list)."""
    if isinstance(value, list | tuple):
        value = value[0] if len(value) == 1 else None
    if not isinstance(value, str):
        return None
    version, sep, request_id = value.partition(":")
    if not sep or not request_id or not version.isdigit():
        return None
    return request_id, int(version)


def kill_switch_key(adapter: str, tenant_id: str) -> str:
    """The wake-up key of one kill switch row (``*`` for all, as the row spells it)."""
    return f"kill_switch:{adapter}/{tenant_id}"


def held_by_kill_switch(adapter: str, tenant_id: str) -> list[str]:
    """Every switch row that may hold this adapter/tenant: a reopen of any of them lists the run
    with one equality on its own key (visibility has no suffix match)."""
    return [kill_switch_key(a, t) for a in (adapter, "*") for t in (tenant_id, "*")]


def gate_key(tenant_id: str) -> str:
    """The wake-up key of a tenant's review backlog: a decided review may clear it."""
    return f"gate:{tenant_id}"

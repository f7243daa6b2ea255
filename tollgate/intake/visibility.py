"""What a run shows in visibility from its start, before any of its code runs: the Web UI's
static summary and the ``TollgateTenant`` / ``TollgateEventType`` search attributes.

Only values that pass the id patterns are used, so a producer cannot put free text there. They
are the producer's claim until the workflow validates the event: a run of the one-marker shape
(ADR 0053) leaves them when validation agrees and never upserts them again, corrects them when it
does not, and unsets them when the event is not admitted (workflows/opening.py).
"""

from __future__ import annotations

import json
import re

from temporalio.common import SearchAttributePair, TypedSearchAttributes

from contracts.base import EVENT_TYPE_PATTERN, ID_PATTERN
from contracts.events import MAX_EVENT_CHARS
from workflows.search_attributes import EVENT_TYPE, TENANT

_ID = re.compile(ID_PATTERN)
_EVENT_TYPE = re.compile(EVENT_TYPE_PATTERN)


def _named(raw: str) -> tuple[str | None, str | None]:
    """The raw event's ``(event_type, tenant_id)``, each None unless it passes its pattern."""
    try:
        data = json.loads(raw) if len(raw) <= MAX_EVENT_CHARS else None
    except ValueError:
        return None, None
    if not isinstance(data, dict):
        return None, None
    kind, tenant = data.get("event_type"), data.get("tenant_id")
    return (kind if isinstance(kind, str) and _EVENT_TYPE.fullmatch(kind) else None,
            tenant if isinstance(tenant, str) and _ID.fullmatch(tenant) else None)


def start_view(raw: str) -> tuple[str | None, TypedSearchAttributes]:
    """From one parse of ``raw``: the run's static summary in the Web UI (event type and
    tenant, nothing personal) and the tenant and event type to start it with (empty when
    neither passes)."""
    kind, tenant = _named(raw)
    summary = None if kind is None else (
        f"{kind} for tenant {tenant}" if tenant is not None else kind)
    return summary, event_attributes(tenant, kind)


def event_attributes(tenant: str | None, kind: str | None) -> TypedSearchAttributes:
    """Search attributes naming ``tenant`` and ``kind``, each only when it passes its pattern."""
    pairs: list[SearchAttributePair[str]] = []
    if tenant is not None and _ID.fullmatch(tenant):
        pairs.append(SearchAttributePair(TENANT, tenant))
    if kind is not None and _EVENT_TYPE.fullmatch(kind):
        pairs.append(SearchAttributePair(EVENT_TYPE, kind))
    return TypedSearchAttributes(pairs)

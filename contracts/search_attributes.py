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

#: Name -> kind as the Temporal CLI spells it (``--search-attribute NAME=KIND``).
SEARCH_ATTRIBUTES = MappingProxyType({
    STATE: "Keyword", TENANT: "Keyword", EVENT_TYPE: "Keyword", REVIEW_DUE: "Datetime",
})

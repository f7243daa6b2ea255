"""Typed keys for the search attributes the workflows set (names in ``contracts``)."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

from contracts import search_attributes as names

STATE = SearchAttributeKey.for_keyword(names.STATE)
TENANT = SearchAttributeKey.for_keyword(names.TENANT)
EVENT_TYPE = SearchAttributeKey.for_keyword(names.EVENT_TYPE)
REVIEW_DUE = SearchAttributeKey.for_datetime(names.REVIEW_DUE)
HELD_BY = SearchAttributeKey.for_keyword_list(names.HELD_BY)
REVIEW_TICKET = SearchAttributeKey.for_keyword(names.REVIEW_TICKET)

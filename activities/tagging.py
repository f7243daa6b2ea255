"""Tagging activities (docs/tagging.md): claim a job, ask the model, write the tags, record a
failure. The model call runs on the draft queue (it holds no database); the others on main.

Each method calls one port, maps taxonomy errors with ``to_application_error`` and logs one
canonical line with ids and outcome codes only (never the title, URL or the tags' text).
"""

from __future__ import annotations

import time

import structlog
from temporalio import activity

from activities.errors import to_application_error
from adapters.models.tag_parsing import parse_tag_answer
from adapters.ports.models import TagProvider
from adapters.ports.stores.tagging import TagJobStore
from contracts.errors import TollgateError
from contracts.tagging import (
    ApplyTagsRequest,
    ClaimRequest,
    JobFailure,
    JobState,
    TaggingInput,
    TagItemResult,
    TagJob,
    TagPrompt,
    TagSuggestions,
)
from policies.tagging import TRIGRAM_MERGE

log = structlog.get_logger("tollgate.tagging")


class TaggingActivities:
    def __init__(self, store: TagJobStore) -> None:
        self._store = store

    @activity.defn
    async def claim_tag_job(self, request: ClaimRequest) -> TaggingInput:
        try:
            found = await self._store.claim(request.item_id, request.attempt)
        except TollgateError as exc:
            raise to_application_error(exc) from None
        log.info("claim_tag_job", item_id=request.item_id, attempt=request.attempt,
                 claimed=found.claimed, state=found.state.value)
        return found

    @activity.defn
    async def apply_item_tags(self, request: ApplyTagsRequest) -> TagItemResult:
        applied = await self._store.apply_tags(request, TRIGRAM_MERGE)
        log.info("apply_item_tags", item_id=request.item_id, attempt=request.attempt,
                 outcomes=[a.how for a in applied])
        return TagItemResult(item_id=request.item_id, state=JobState.SUCCEEDED, tags=applied)

    @activity.defn
    async def record_tag_failure(self, failure: JobFailure) -> TagJob | None:
        state = await self._store.record_failure(failure)
        log.info("record_tag_failure", item_id=failure.item_id, attempt=failure.attempt,
                 state=state.value)
        return await self._store.get_job(failure.item_id)


class TagModelActivities:
    """The model side, registered on the draft worker beside ``draft_message``."""

    def __init__(self, provider: TagProvider) -> None:
        self._provider = provider

    @activity.defn
    async def suggest_tags(self, prompt: TagPrompt) -> TagSuggestions:
        started = time.monotonic()
        fields: dict[str, object] = {"status": "error"}
        try:
            reply = await self._provider.suggest_tags(prompt)
            suggestions = parse_tag_answer(reply.raw)
            fields.update(status="read", count=len(suggestions), model=reply.model)
            return TagSuggestions(suggestions=suggestions, model=reply.model)
        except TollgateError as exc:
            # An unreadable answer is retryable: the job attempt fails and is tried again, it is
            # never written down as "no tags".
            fields.update(error_class=exc.error_class.value, error_code=exc.code)
            raise to_application_error(exc) from None
        finally:
            log.info("suggest_tags", item_id=prompt.item_id, provider=self._provider.name,
                     attempt=activity.info().attempt,
                     duration_ms=round((time.monotonic() - started) * 1000), **fields)

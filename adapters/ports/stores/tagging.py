"""Tagging: the tagging job's store (``activities.tagging``)."""

from __future__ import annotations

from typing import Protocol

from contracts.tagging import (
    AppliedTag,
    ApplyTagsRequest,
    JobFailure,
    JobState,
    TaggingInput,
    TagJob,
)


class TagJobStore(Protocol):
    async def claim(self, item_id: int, attempt: int) -> TaggingInput: ...

    async def apply_tags(self, request: ApplyTagsRequest,
                         threshold: float) -> list[AppliedTag]: ...

    async def record_failure(self, failure: JobFailure) -> JobState: ...

    async def get_job(self, item_id: int) -> TagJob | None: ...

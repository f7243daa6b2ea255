"""The tagging domain (docs/tagging.md): a saved item, its tagging job and the tags a model
proposes. Saving never waits for the model; the job row says where the tagging is."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from contracts.base import Frozen, Identifier

#: The seed's rules: at most five tags per item, and a tag the model gave no confidence for
#: counts at this floor (low enough that any stated confidence outranks it).
MAX_TAGS = 5
DEFAULT_CONFIDENCE = 0.45
#: The longest page text a save keeps (a tag needs the gist, not the whole page).
ITEM_TEXT_CHARS = 10_000


class JobState(StrEnum):
    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"


class ItemCapture(Frozen):
    """What a client captured from a page. Validated before anything is written."""

    user_id: Identifier
    url: Annotated[str, StringConstraints(pattern=r"^https?://[^\s/$.?#][^\s]*$",
                                          max_length=2048)]
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1,
                                            max_length=500)]
    description: Annotated[str, StringConstraints(max_length=5000)] = ""
    #: The page's readable text (what the extension captured), for the tagger to read.
    text: Annotated[str, StringConstraints(max_length=ITEM_TEXT_CHARS)] = ""


class SavedItem(Frozen):
    """The save's answer. ``created`` is False when the same user had already saved the URL;
    ``started`` says whether the tagging workflow start is known durable (else the relay will)."""

    item_id: int
    created: bool
    job_state: JobState
    started: bool = False


class TagJob(Frozen):
    item_id: int
    user_id: str
    state: JobState
    attempt_count: int
    last_error: str | None = None
    runs: int = 1
    tenant: str = ""
    updated_at: datetime | None = None


#: How many of the latest jobs in a state ``tollgate items jobs --status`` shows: the seed's
#: queue kept the last 100 completed and 500 failed jobs to look at; here every row is kept and
#: these are the windows (the rest stay queryable in PostgreSQL).
JOBS_SHOWN: dict[JobState, int] = {JobState.SUCCEEDED: 100, JobState.FAILED: 500,
                                   JobState.PENDING: 100, JobState.PROCESSING: 100}


class TagItemRequest(Frozen):
    item_id: int
    #: Which manual run this is (1 = the save's own); part of the workflow id, never random.
    run: int = 1


class ClaimRequest(Frozen):
    item_id: int
    attempt: int


class TaggingInput(Frozen):
    """What a claimed job gives the workflow: the item and the user's existing tag names
    (so the model can reuse them). ``claimed`` is False when the job was not PENDING."""

    claimed: bool
    item_id: int
    state: JobState = JobState.PROCESSING
    user_id: str = ""
    title: str = ""
    description: str = ""
    text: str = ""
    url: str = ""
    user_tags: list[str] = Field(default_factory=list)


class TagPrompt(Frozen):
    item_id: int
    title: str
    description: str = ""
    text: str = ""
    url: str
    user_tags: list[str] = Field(default_factory=list)
    max_tags: int = MAX_TAGS


class TagSuggestion(Frozen):
    tag: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = DEFAULT_CONFIDENCE


class TagSuggestions(Frozen):
    """A readable answer; an empty list is a valid one (some pages have nothing to tag)."""

    suggestions: list[TagSuggestion] = Field(default_factory=list, max_length=MAX_TAGS)
    model: str = ""


class NormalisedTag(Frozen):
    key: str
    name: str
    confidence: float


class ApplyTagsRequest(Frozen):
    item_id: int
    tags: list[NormalisedTag]
    attempt: int


class AppliedTag(Frozen):
    name: str
    key: str
    #: exact: same key; similar: pg_trgm >= the threshold; new: created; removed: the user took
    #: it off this item before, so it was not re-added.
    how: Literal["exact", "similar", "new", "removed"]
    similarity: float | None = None


class TagItemResult(Frozen):
    item_id: int
    state: JobState
    tags: list[AppliedTag] = Field(default_factory=list)
    error: str | None = None


class JobFailure(Frozen):
    item_id: int
    attempt: int
    final: bool
    error: str

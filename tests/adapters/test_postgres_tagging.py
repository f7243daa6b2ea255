"""The tagging store on a real PostgreSQL: a save is one transaction and dedupes on the live
URL, job states tell the truth, a manual retry is the owner's and only from FAILED, and a tag the
user removed is never linked again."""

from __future__ import annotations

import uuid

import asyncpg
import pytest
from pydantic import ValidationError

from adapters.postgres.tagging import TaggingStore
from contracts.errors import InvalidInput, RejectedError
from contracts.tagging import (
    ApplyTagsRequest,
    ItemCapture,
    JobFailure,
    JobState,
    NormalisedTag,
)
from policies.tagging import TRIGRAM_MERGE, tag_key


@pytest.fixture
def store(pool: asyncpg.Pool) -> TaggingStore:
    return TaggingStore(pool)


def capture(user: str, url: str = "https://example.com/a", title: str = "A page") -> ItemCapture:
    return ItemCapture(user_id=user, url=url, title=title)


def user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def tag(name: str, confidence: float = 0.8) -> NormalisedTag:
    return NormalisedTag(key=tag_key(name), name=name, confidence=confidence)


async def test_saving_the_same_live_url_twice_returns_the_first_item(
        store: TaggingStore, pool: asyncpg.Pool) -> None:
    u = user()
    first = await store.save_item("acme", capture(u))
    again = await store.save_item("acme", capture(u, title="Another title"))
    assert first.created and not again.created
    assert again.item_id == first.item_id and again.job_state == JobState.PENDING
    assert await pool.fetchval("SELECT count(*) FROM items WHERE user_id = $1", u) == 1
    assert await pool.fetchval("SELECT count(*) FROM tagging_jobs WHERE user_id = $1", u) == 1
    # Another user saving the same URL gets an item of their own.
    assert (await store.save_item("acme", capture(user()))).item_id != first.item_id


async def test_a_deleted_item_frees_its_url(store: TaggingStore, pool: asyncpg.Pool) -> None:
    u = user()
    first = await store.save_item("acme", capture(u))
    await pool.execute("UPDATE items SET deleted_at = now() WHERE id = $1", first.item_id)
    assert (await store.save_item("acme", capture(u))).item_id != first.item_id


@pytest.mark.parametrize("bad", [{"url": "not a url"}, {"title": "   "}, {"user_id": "a b"}])
def test_an_invalid_capture_is_refused_before_any_write(bad: dict[str, str]) -> None:
    fields = {"user_id": "u-1", "url": "https://example.com/", "title": "t", **bad}
    with pytest.raises(ValidationError):
        ItemCapture.model_validate(fields)


async def test_exact_then_similar_then_new(store: TaggingStore, pool: asyncpg.Pool) -> None:
    u = user()
    saved = await store.save_item("acme", capture(u))
    await store.add_user_tag("acme", u, tag_key("UI design"), "UI design")
    await store.add_user_tag("acme", u, tag_key("JavaScript"), "JavaScript")
    assert (await store.claim(saved.item_id, 1)).claimed
    applied = await store.apply_tags(ApplyTagsRequest(
        item_id=saved.item_id, attempt=1,
        tags=[tag("Thiết kế UI"), tag("JavaScripts"), tag("Figma")]), TRIGRAM_MERGE)
    assert [(a.name, a.how) for a in applied] == [
        ("UI design", "exact"), ("JavaScript", "similar"), ("Figma", "new")]
    assert await store.item_tags(saved.item_id) == ["Figma", "JavaScript", "UI design"]
    assert await pool.fetchval("SELECT count(*) FROM tags WHERE user_id = $1", u) == 3
    assert (await store.get_job(saved.item_id)).state == JobState.SUCCEEDED  # type: ignore[union-attr]


async def test_a_removed_tag_is_not_linked_again(store: TaggingStore) -> None:
    u = user()
    saved = await store.save_item("acme", capture(u))
    request = ApplyTagsRequest(item_id=saved.item_id, attempt=1, tags=[tag("Figma"), tag("UX")])
    await store.apply_tags(request, TRIGRAM_MERGE)
    assert await store.remove_tag("acme", u, saved.item_id, "Figma")
    applied = await store.apply_tags(request, TRIGRAM_MERGE)  # a second run of the same job
    assert [(a.name, a.how) for a in applied] == [("Figma", "removed"), ("UX", "exact")]
    assert await store.item_tags(saved.item_id) == ["UX"]


async def test_failed_only_on_the_last_attempt(store: TaggingStore) -> None:
    saved = await store.save_item("acme", capture(user()))
    await store.claim(saved.item_id, 1)
    early = JobFailure(item_id=saved.item_id, attempt=1, final=False, error="retryable: x")
    assert await store.record_failure(early) == JobState.PENDING
    job = await store.get_job(saved.item_id)
    assert job is not None and (job.state, job.attempt_count, job.last_error) == (
        JobState.PENDING, 1, "retryable: x")
    await store.claim(saved.item_id, 2)
    last = JobFailure(item_id=saved.item_id, attempt=2, final=True, error="retryable: y")
    assert await store.record_failure(last) == JobState.FAILED


async def test_manual_retry_is_the_owners_and_only_from_failed(store: TaggingStore) -> None:
    u = user()
    saved = await store.save_item("acme", capture(u))
    with pytest.raises(RejectedError, match="only a FAILED job"):
        await store.retry_job("acme", u, saved.item_id)
    await store.claim(saved.item_id, 1)
    await store.record_failure(JobFailure(item_id=saved.item_id, attempt=1, final=True,
                                          error="e"))
    with pytest.raises(InvalidInput, match="no tagging job"):
        await store.retry_job("acme", "someone-else", saved.item_id)
    job = await store.retry_job("acme", u, saved.item_id)
    assert (job.state, job.runs, job.attempt_count) == (JobState.PENDING, 2, 0)
    assert (saved.item_id, 2) in await store.unstarted()


async def test_jobs_with_no_consumer_show_as_pending_growing(store: TaggingStore) -> None:
    before = (await store.jobs_by_state())[JobState.PENDING]
    for n in range(3):
        await store.save_item("acme", capture(user(), url=f"https://example.com/{n}"))
    assert (await store.jobs_by_state())[JobState.PENDING] == before + 3

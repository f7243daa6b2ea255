"""TagItemWorkflow on the time-skipping server with the real store: tagged with one merged and
one new tag, an unreadable answer retried (never an empty success), FAILED only after the last
attempt, a manual retry that does not bring back a removed tag, a duplicate start that tags once,
and a save whose workflow start failed picked up by the relay."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import asyncpg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.tagging import TaggingActivities, TagModelActivities
from adapters.postgres.pool import create_pool
from adapters.postgres.tagging import TaggingStore
from contracts.errors import RetryableError
from contracts.tagging import ItemCapture, JobState
from policies.tagging import tag_key
from tests.workflows.tag_item_support import ANSWER, ScriptedTagger, result
from tollgate.intake.items import relay_unstarted, save_item, temporal_starter
from workflows.process_event import DRAFT_TASK_QUEUE
from workflows.tag_item import TagItemWorkflow
from workflows.timeouts import TAG_JOB_ATTEMPTS


@pytest.fixture(scope="module")
async def store(database_url: str) -> AsyncIterator[TaggingStore]:
    pool = await create_pool(database_url)
    yield TaggingStore(pool)
    await pool.close()


@pytest.fixture
async def tagging(env: WorkflowEnvironment, store: TaggingStore
                  ) -> AsyncIterator[tuple[Client, str, ScriptedTagger]]:
    """A main-queue worker of its own and the draft-queue model worker with a scripted model."""
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    tagger = ScriptedTagger()
    jobs, model = TaggingActivities(store), TagModelActivities(tagger)
    async with Worker(env.client, task_queue=queue, workflows=[TagItemWorkflow],
                      activities=[jobs.claim_tag_job, jobs.apply_item_tags,
                                  jobs.record_tag_failure]), \
            Worker(env.client, task_queue=DRAFT_TASK_QUEUE, activities=[model.suggest_tags]):
        yield env.client, queue, tagger


async def saved(store: TaggingStore, client: Client, queue: str, *tags: str) -> tuple[str, int]:
    user = f"u-{uuid.uuid4().hex[:8]}"
    for name in tags:
        await store.add_user_tag("acme", user, tag_key(name), name)
    item = await save_item(store, temporal_starter(client, queue),
                           ItemCapture(user_id=user, url="https://example.com/ui",
                                       title="Thiết kế UI với Figma"), tenant="acme")
    assert item.created and item.started
    return user, item.item_id


async def test_tags_merge_into_the_users_tags_and_new_ones_are_made(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore) -> None:
    client, queue, tagger = tagging
    tagger.script = [ANSWER]
    _, item_id = await saved(store, client, queue, "UI design")
    out = await result(client, item_id)
    assert out["state"] == "SUCCEEDED"
    assert [(t["name"], t["how"]) for t in out["tags"]] == [
        ("UI design", "exact"), ("Figma", "new")]
    assert await store.item_tags(item_id) == ["Figma", "UI design"]


async def test_an_unreadable_answer_is_retried_never_an_empty_success(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore) -> None:
    client, queue, tagger = tagging
    tagger.script = ["{}", ANSWER]
    _, item_id = await saved(store, client, queue)
    assert (await result(client, item_id))["state"] == "SUCCEEDED"
    job = await store.get_job(item_id)
    assert job is not None and job.attempt_count == 2 and tagger.calls == 2
    assert await store.item_tags(item_id) == ["Figma", "Thiết kế UI"]


async def test_a_readable_empty_answer_is_a_success_with_no_tags(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore) -> None:
    client, queue, tagger = tagging
    tagger.script = ['{"tags": []}']
    _, item_id = await saved(store, client, queue)
    assert (await result(client, item_id))["state"] == "SUCCEEDED"
    assert await store.item_tags(item_id) == [] and tagger.calls == 1


async def test_failed_after_the_last_attempt_then_a_retry_skips_the_removed_tag(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore,
        database_url: str) -> None:
    client, queue, tagger = tagging
    tagger.script = [ANSWER]
    user, item_id = await saved(store, client, queue)
    await result(client, item_id)
    assert await store.remove_tag("acme", user, item_id, "Figma")
    # The item is tagged again (say its page changed) and the model is down for every attempt.
    conn = await asyncpg.connect(database_url)
    await conn.execute("UPDATE tagging_jobs SET state = 'FAILED' WHERE item_id = $1", item_id)
    await conn.close()
    job = await store.retry_job("acme", user, item_id)
    tagger.script, tagger.calls = [RetryableError("model_503")], 0
    await temporal_starter(client, queue)(item_id, job.runs)
    out = await result(client, item_id, job.runs)
    assert out["state"] == "FAILED" and tagger.calls == TAG_JOB_ATTEMPTS
    failed = await store.get_job(item_id)
    assert failed is not None and failed.state == JobState.FAILED
    assert failed.last_error is not None and "model_503" in failed.last_error
    # The user retries; the model is back and proposes Figma again: it stays removed.
    job = await store.retry_job("acme", user, item_id)
    tagger.script = [ANSWER]
    assert await relay_unstarted(store, temporal_starter(client, queue)) >= 1
    out = await result(client, item_id, job.runs)
    assert [(t["name"], t["how"]) for t in out["tags"]] == [
        ("Thiết kế UI", "exact"), ("Figma", "removed")]
    assert await store.item_tags(item_id) == ["Thiết kế UI"]


async def test_a_duplicate_save_or_start_tags_once(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore) -> None:
    client, queue, tagger = tagging
    tagger.script = [ANSWER]
    user, item_id = await saved(store, client, queue)
    await result(client, item_id)
    again = await save_item(store, temporal_starter(client, queue),
                            ItemCapture(user_id=user, url="https://example.com/ui", title="x"),
                            tenant="acme")
    assert (again.item_id, again.created, again.started) == (item_id, False, False)
    # The relay starting run 1 again (a crash before it marked the start) changes nothing.
    await temporal_starter(client, queue)(item_id, 1)
    assert tagger.calls == 1


async def test_a_failed_start_never_fails_the_save_and_the_relay_starts_it(
        tagging: tuple[Client, str, ScriptedTagger], store: TaggingStore) -> None:
    client, queue, tagger = tagging
    tagger.script = [ANSWER]

    async def temporal_down(item_id: int, run: int) -> None:
        raise ConnectionError("temporal unreachable")

    item = await save_item(store, temporal_down,
                           ItemCapture(user_id="u-relay", url="https://example.com/r",
                                       title="Figma tips"), tenant="acme")
    assert item.created and not item.started and item.job_state == JobState.PENDING
    assert (item.item_id, 1) in await store.unstarted()
    assert await relay_unstarted(store, temporal_starter(client, queue)) >= 1
    assert (await result(client, item.item_id))["state"] == "SUCCEEDED"
    assert (item.item_id, 1) not in await store.unstarted()

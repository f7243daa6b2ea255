"""TagItemWorkflow with the configured model reached through the real SDKs (the wire-format
server stands in for the vendor): the saved page's own text reaches the model, an unreadable
answer and a 503 each cost one attempt and the third attempt's answer is written, three 5xx
answers end FAILED with the reason, and a readable empty list is SUCCEEDED with no tags."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.tagging import TaggingActivities, TagModelActivities
from adapters.postgres.pool import create_pool
from adapters.postgres.tagging import TaggingStore
from contracts.tagging import ItemCapture, JobState
from policies.keys import tag_workflow_id
from tests.adapters.fake_llm import (
    CHAT,
    MESSAGES,
    FakeLLM,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_chat,
    openai_error,
)
from tests.workflows.tag_item_support import result
from tollgate.config.models import ModelSettings
from tollgate.intake.items import save_item, temporal_starter
from workflows.process_event import DRAFT_TASK_QUEUE
from workflows.tag_item import TagItemWorkflow
from workflows.timeouts import TAG_JOB_ATTEMPTS

PAGE = ItemCapture(user_id="u-sdk", url="https://example.com/dashboards",
                   title="Dashboards that answer one question",
                   text="A dashboard earns its place when its charts answer a single question.")


@pytest.fixture(scope="module")
async def store(database_url: str) -> AsyncIterator[TaggingStore]:
    pool = await create_pool(database_url)
    yield TaggingStore(pool)
    await pool.close()


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


async def tag_with(vendor: str, llm: FakeLLM, env: WorkflowEnvironment,
                   store: TaggingStore) -> tuple[Client, str, int, dict[str, object]]:
    """Save PAGE for a fresh user and run its tagging with ``vendor`` through its SDK."""
    from tollgate.runtime.tag_models import build_tag_provider

    base = llm.anthropic_base_url if vendor == "anthropic" else llm.openai_base_url
    provider = build_tag_provider(ModelSettings.from_env({
        "TOLLGATE_DRAFT_PROVIDER": vendor, "TOLLGATE_DRAFT_API_KEY": "sk-test",
        "TOLLGATE_DRAFT_BASE_URL": base, "TOLLGATE_DRAFT_MODEL": "m-test"}).draft())
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    jobs, model = TaggingActivities(store), TagModelActivities(provider)
    async with Worker(env.client, task_queue=queue, workflows=[TagItemWorkflow],
                      activities=[jobs.claim_tag_job, jobs.apply_item_tags,
                                  jobs.record_tag_failure]), \
            Worker(env.client, task_queue=DRAFT_TASK_QUEUE, activities=[model.suggest_tags]):
        page = PAGE.model_copy(update={"user_id": f"u-{uuid.uuid4().hex[:8]}"})
        item = await save_item(store, temporal_starter(env.client, queue), page, tenant="acme")
        out = await result(env.client, item.item_id)
    return env.client, queue, item.item_id, out


async def test_unreadable_then_503_then_an_answer_is_three_attempts_and_written(
        env: WorkflowEnvironment, store: TaggingStore, llm: FakeLLM) -> None:
    answer = {"tags": ["Dashboards", "charts"], "confidence": [0.9, 0.7]}
    llm.script(CHAT, Reply(body=openai_chat("{}")), openai_error(503),
               Reply(body=openai_chat(json.dumps(answer))))
    client, _, item_id, out = await tag_with("openai", llm, env, store)
    assert out["state"] == "SUCCEEDED"
    assert await store.item_tags(item_id) == ["Dashboards", "charts"]
    job = await store.get_job(item_id)
    assert job is not None and job.attempt_count == TAG_JOB_ATTEMPTS and job.last_error is None
    assert len(llm.requests) == TAG_JOB_ATTEMPTS
    assert PAGE.text in json.dumps(llm.requests[0].body)  # the item's own text was read
    # Temporal's history holds the seed's numbers: 5 s then 10 s between attempts, each model
    # call cut at 20 s.
    history = await client.get_workflow_handle(tag_workflow_id(item_id, 1)).fetch_history()
    timers = [e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
              for e in history.events if e.HasField("timer_started_event_attributes")]
    cuts = {e.activity_task_scheduled_event_attributes.start_to_close_timeout.ToTimedelta()
            for e in history.events if e.HasField("activity_task_scheduled_event_attributes")
            and e.activity_task_scheduled_event_attributes.activity_type.name == "suggest_tags"}
    assert timers == [timedelta(seconds=5), timedelta(seconds=10)]
    assert cuts == {timedelta(seconds=20)}


async def test_three_5xx_answers_end_failed_with_the_reason(
        env: WorkflowEnvironment, store: TaggingStore, llm: FakeLLM) -> None:
    llm.script(MESSAGES, *[anthropic_error(529, "overloaded_error")] * TAG_JOB_ATTEMPTS)
    _, _, item_id, out = await tag_with("anthropic", llm, env, store)
    assert out["state"] == "FAILED"
    job = await store.get_job(item_id)
    assert job is not None and job.state == JobState.FAILED
    assert job.attempt_count == TAG_JOB_ATTEMPTS and "provider_529" in (job.last_error or "")
    assert len(llm.requests) == TAG_JOB_ATTEMPTS


async def test_an_empty_list_is_succeeded_with_no_tags(
        env: WorkflowEnvironment, store: TaggingStore, llm: FakeLLM) -> None:
    llm.script(MESSAGES, Reply(body=anthropic_message('{"tags": []}')))
    _, _, item_id, out = await tag_with("anthropic", llm, env, store)
    assert out["state"] == "SUCCEEDED" and out["tags"] == []
    job = await store.get_job(item_id)
    assert job is not None and job.attempt_count == 1 and len(llm.requests) == 1


@pytest.mark.parametrize(("asked", "waited"), [("40", 40), ("3600", 300), ("2", 5)])
async def test_a_429_waits_as_long_as_the_model_asks_within_the_cap(
        env: WorkflowEnvironment, store: TaggingStore, llm: FakeLLM, asked: str,
        waited: int) -> None:
    limited = Reply(status=429, body={"error": {"message": "slow down", "type": "rate_limit"}},
                    headers={"retry-after": asked})
    llm.script(CHAT, limited, Reply(body=openai_chat('{"tags": ["charts"]}')))
    client, _, item_id, out = await tag_with("openai", llm, env, store)
    assert out["state"] == "SUCCEEDED" and await store.item_tags(item_id) == ["charts"]
    history = await client.get_workflow_handle(tag_workflow_id(item_id, 1)).fetch_history()
    timers = [e.timer_started_event_attributes.start_to_fire_timeout.ToTimedelta()
              for e in history.events if e.HasField("timer_started_event_attributes")]
    # Retry-After when longer than the 5 s backoff, never past TAG_RETRY_AFTER_CAP (5 min).
    assert timers == [timedelta(seconds=waited)]

"""Record TagItemWorkflow histories with failed attempts for tests/replay (not collected: run it
by name). ``TOLLGATE_RECORD_PREFIX`` prefixes the file names (``pre-tag-retry-after-`` on the
code before that patch, ``tag-retry-after-`` after):

    TOLLGATE_RECORD_PREFIX=tag-retry-after- .venv/bin/pytest tests/replay/record_tag_histories.py

Scenario ``rate_limited_then_tagged``: the model answers 429 with Retry-After 30 s, then tags.
On the time-skipping server with the real store, so the waits pass at once.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.tagging import TaggingActivities, TagModelActivities
from adapters.postgres.pool import create_pool
from adapters.postgres.tagging import TaggingStore
from contracts.errors import RateLimited
from contracts.tagging import ItemCapture
from policies.keys import tag_workflow_id
from tests.workflows.tag_item_support import ANSWER, ScriptedTagger, result
from tollgate.intake.items import save_item, temporal_starter
from workflows.process_event import DRAFT_TASK_QUEUE
from workflows.tag_item import TagItemWorkflow

OUT = Path(__file__).parent / "histories"


async def test_record_rate_limited_then_tagged(env: WorkflowEnvironment,
                                               database_url: str) -> None:
    prefix = os.environ["TOLLGATE_RECORD_PREFIX"]
    pool = await create_pool(database_url)
    store, tagger = TaggingStore(pool), ScriptedTagger()
    tagger.script = [RateLimited("provider_429", retry_after=30.0), ANSWER]
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    jobs, model = TaggingActivities(store), TagModelActivities(tagger)
    async with Worker(env.client, task_queue=queue, workflows=[TagItemWorkflow],
                      activities=[jobs.claim_tag_job, jobs.apply_item_tags,
                                  jobs.record_tag_failure]), \
            Worker(env.client, task_queue=DRAFT_TASK_QUEUE, activities=[model.suggest_tags]):
        item = await save_item(store, temporal_starter(env.client, queue),
                               ItemCapture(user_id="u-record", url="https://example.com/ui",
                                           title="Thiết kế UI với Figma"), tenant="acme")
        assert (await result(env.client, item.item_id))["state"] == "SUCCEEDED"
        history = await env.client.get_workflow_handle(
            tag_workflow_id(item.item_id, 1)).fetch_history()
    await pool.close()
    data = json.loads(history.to_json())
    (OUT / f"{prefix}rate_limited_then_tagged.json").write_text(json.dumps(data, indent=1) + "\n")

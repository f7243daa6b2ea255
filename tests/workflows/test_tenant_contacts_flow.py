"""Issue 28 item 3 through a real run (ADR 0039): the context step reads the tenant's own
contact points from PostgreSQL, the workflow hands them to the draft worker on the request,
and a draft quoting the tenant's hotline reaches the reviewer unflagged; before the point was
added, the same draft stopped as foreign. Real dev server, worker, PostgreSQL and stand-ins; the
model answers from a script that quotes the hotline the national way."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import asyncpg
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.draft import DraftActivities
from adapters.models.draft_parsing import parse_draft
from adapters.ports.models import ModelAnswer
from adapters.postgres.contacts import ContactStore
from contracts import DraftPrompt, EventState
from contracts.contacts import TenantContact
from tests.conftest import signed_event, start, wait_review, worker_settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.workers import main_worker
from workflows.process_event import DRAFT_TASK_QUEUE

ANSWER = json.dumps({
    "message": "Hi Lan, Miu's vaccination is due soon. Call us on (028) 3822-1234 to book.",
    "source_refs": ["crm.first_name", "crm.pet_name"], "unknowns": [],
    "reason": "Reminder with the clinic's hotline.",
})


class QuotesTheHotline:
    name, model = "scripted", "scripted-1"

    def __init__(self) -> None:
        self.contacts: list[tuple[str, ...]] = []

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer:
        self.contacts.append(tuple(c.key for c in prompt.request.tenant_contacts))
        return ModelAnswer(draft=parse_draft(ANSWER), raw=ANSWER, model=self.model)


async def test_the_tenants_hotline_read_at_context_keeps_a_real_runs_draft_unflagged(
    dev_server: WorkflowEnvironment, standins: StandIns, database_url: str, pool: asyncpg.Pool,
    tmp_path: Path,
) -> None:
    client, queue = dev_server.client, f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    model = QuotesTheHotline()
    drafts = Worker(client, task_queue=DRAFT_TASK_QUEUE,
                    activities=[DraftActivities(model).draft_message])
    async with main_worker(client, settings), drafts:
        before = await start(client, queue, signed_event("C-1001"))
        outcome = await before.result()
        assert outcome.state == EventState.FAILED_VALIDATION
        findings = await pool.fetchval("SELECT findings FROM drafts WHERE workflow_id = $1",
                                       before.id)
        assert json.loads(findings) == ["foreign_pii:phone"]

        await ContactStore(pool).add("acme", TenantContact(kind="phone", value="+84 28 3822 1234"),
                                     actor="lee", reason="published hotline")
        after = await start(client, queue, signed_event("C-1001"))
        ticket = await wait_review(after)
        assert ticket["flags"] == [] and "(028) 3822-1234" in ticket["draft"]["message"]
        await after.terminate("test over")
    assert model.contacts == [(), ("2838221234",)]

"""Issue 28 item 3 along the activities: the context step reads the tenant's own contact points
from PostgreSQL through its port, they travel on the draft request, and the draft activity's
validator passes a draft quoting the tenant's hotline while any other number still stops it
(ADR 0039). The context step reads them because the draft worker holds no database URL."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import asyncpg
from temporalio.testing import ActivityEnvironment

from activities.context import ContextActivities
from adapters.postgres.contacts import ContactStore
from contracts import ContextRequest, ContextResult, CustomerRecord, DraftRequest, EventRef
from contracts.contacts import TenantContact
from contracts.review import StepRecord
from policies.prompts import PROMPT_VERSION
from tests.activities.draft_support import CLEAN, ScriptedProvider, run
from tests.activities.tenant_contacts_support import acme_policy

REF = EventRef(workflow_id="event/acme/k-hotline", tenant_id="acme", event_id="e-hotline",
               event_type="CARE_DUE", entity_id="C-1001", correlation_id="c-1", schema_version=3)


class OneRecord:
    async def fetch_customer(self, tenant_id: str, customer_id: str) -> CustomerRecord:
        return CustomerRecord(tenant_id=tenant_id, customer_id=customer_id, first_name="Lan",
                              pet_name="Miu", consent_messaging=True,
                              updated_at=datetime.now(UTC))


class Steps:
    async def record_step(self, step: StepRecord) -> bool:
        return True


async def read_context(pool: asyncpg.Pool) -> ContextResult:
    context = ContextActivities(Steps(), OneRecord(), ContactStore(pool))
    request = ContextRequest(ref=REF, payload={"customer_id": "C-1001", "due_at": "2026-12-09"},
                             policy=acme_policy(), seq=3)
    result: ContextResult = await ActivityEnvironment().run(context.load_context, request)
    return result


def draft_request(context: ContextResult) -> DraftRequest:
    policy = acme_policy()
    return DraftRequest(ref=REF, context=context.fields, policy_version=policy.version,
                        prompt_version=PROMPT_VERSION, rule=policy.rule,
                        tenant_contacts=context.tenant_contacts)


def quoting(number: str) -> str:
    return json.dumps({**CLEAN, "message": f"Hi Lan, Miu's check-up is due. Call {number}."})


async def test_the_hotline_read_by_the_context_step_keeps_the_draft_clean(
    pool: asyncpg.Pool,
) -> None:
    hotline_national = "(028) 3822-1234"  # acme's policy lists it as "+84 28 3822 1234"
    before = await run(ScriptedProvider(quoting(hotline_national)),
                       draft_request(await read_context(pool)))
    assert before.status == "failed_validation" and before.findings == ["foreign_pii:phone"]

    await ContactStore(pool).add("acme", TenantContact(kind="phone", value="028 3822 1234"),
                                 actor="lee", reason="published hotline")
    context = await read_context(pool)
    assert [c.key for c in context.tenant_contacts] == ["2838221234"]

    after = await run(ScriptedProvider(quoting(hotline_national)), draft_request(context))
    assert after.status == "drafted" and after.findings == [] and after.flags == []

    other = await run(ScriptedProvider(quoting("(028) 3822-9999")), draft_request(context))
    assert other.status == "failed_validation" and other.findings == ["foreign_pii:phone"]


async def test_another_tenants_hotline_is_foreign_to_this_one(pool: asyncpg.Pool) -> None:
    await ContactStore(pool).add("globex", TenantContact(kind="phone", value="024 3936 7777"),
                                 actor="lee", reason="their hotline")
    context = await read_context(pool)

    result = await run(ScriptedProvider(quoting("024 3936 7777")), draft_request(context))
    assert result.status == "failed_validation" and result.findings == ["foreign_pii:phone"]

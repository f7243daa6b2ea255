"""The offline drafter's order confirmation (ORDER_PLACED, the fan-out's notify consumer): built
only from the facts the policy gives it, each cited; passes the validator the policy applies;
a missing or odd fact is listed as unknown, never made up."""

from __future__ import annotations

import pytest

from adapters.models.offline import OfflineDraftProvider
from contracts import DraftRequest, EventRef
from policies.draft_validator import validate_draft
from policies.matrix import load_matrix
from policies.prompts import build_prompt, prompt_version_for

RULE = load_matrix().rule_for("acme", "ORDER_PLACED")


def order_request(context: dict[str, str], note: str | None = None) -> DraftRequest:
    assert RULE is not None
    ref = EventRef(workflow_id="event/acme/order-9.notify", tenant_id="acme",
                   event_id="order-9.notify", event_type="ORDER_PLACED", entity_id="C-9",
                   correlation_id="order-9", schema_version=1)
    return DraftRequest(ref=ref, context=context, policy_version=RULE.version,
                        prompt_version=prompt_version_for("ORDER_PLACED"), rule=RULE.rule,
                        reviewer_note=note, version=2 if note else 1)


async def test_the_confirmation_cites_the_name_order_and_total_and_passes_the_policy() -> None:
    request = order_request({"crm.first_name": "Lan", "crm.locale": "en",
                             "event.order_id": "O-1001", "event.total_cents": "123456"})
    answer = await OfflineDraftProvider().propose(build_prompt(request))
    assert answer.draft.message == ("Hi Lan, thank you for your order O-1001. We have received "
                                    "it (total 1,234.56) and will let you know when it ships.")
    assert set(answer.draft.source_refs) == set(request.context)
    assert answer.draft.unknowns == []
    assert validate_draft(answer.draft, request) == []


@pytest.mark.parametrize(("context", "unknown"), [
    ({"crm.first_name": "Lan (call 0912 345 678)", "event.order_id": "O-1",
      "event.total_cents": "100"}, "crm.first_name"),
    ({"crm.first_name": "Lan", "event.total_cents": "100"}, "event.order_id"),
    ({"crm.first_name": "Lan", "event.order_id": "O-1", "event.total_cents": "-5"},
     "event.total_cents"),
])
async def test_a_missing_or_odd_fact_is_listed_never_carried(context: dict[str, str],
                                                             unknown: str) -> None:
    answer = await OfflineDraftProvider().propose(build_prompt(order_request(context)))
    assert answer.draft.unknowns == [unknown]
    assert unknown not in answer.draft.source_refs
    assert "0912" not in answer.draft.message and "-5" not in answer.draft.message


async def test_vietnamese_and_a_reviewer_question_it_cannot_answer() -> None:
    request = order_request({"crm.first_name": "Minh", "crm.locale": "vi-VN",
                             "event.order_id": "O-7", "event.total_cents": "4590"},
                            note="When will it ship?")
    answer = await OfflineDraftProvider().propose(build_prompt(request))
    assert answer.draft.message.startswith("Chào Minh, cảm ơn bạn đã đặt đơn hàng O-7.")
    assert "When will it ship" not in answer.draft.message
    assert answer.draft.unknowns == ["reviewer asked: \u201cWhen will it ship?\u201d "
                                     "(no context fact answers it)"]


def test_a_model_is_asked_for_an_order_confirmation_under_the_same_rules() -> None:
    prompt = build_prompt(order_request({"crm.first_name": "Lan"}))
    care = build_prompt(order_request({}).model_copy(update={"ref": order_request(
        {}).ref.model_copy(update={"event_type": "CARE_DUE"})}))
    assert prompt.prompt_version == "order-confirmation-v2"
    assert prompt.system.startswith("You draft a short order confirmation")
    assert prompt.system.split("Rules:")[1] == care.system.split("Rules:")[1]

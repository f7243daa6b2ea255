"""Item titles and review decisions with hostile text: a 422 naming the field and rule, never a
500 and never an accepted decision that cannot be recorded (issue 25)."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.http.items_support import bearer
from tollgate.http.deps import Services
from tollgate.http.review_service import DecisionIn


@pytest.mark.parametrize(("title", "rule"), [("a\u0000b", "nul"), ("a\\ud800b", "lone_surrogate"),
                                             ("a\u0007b", "control_character")])
async def test_item_title_with_hostile_text_is_422_and_saves_nothing(
        api: httpx.AsyncClient, http_services: Services, title: str, rule: str) -> None:
    url = f"https://example.com/edge/{rule}"
    body = json.dumps({"url": url, "title": title}).replace("\\\\ud800", "\\ud800")
    answer = await api.post("/v1/items", content=body,
                            headers={**bearer(http_services, "ann"),
                                     "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert "$.title" in answer.text and rule in answer.text
    saved = await http_services.pool.fetchval("SELECT count(*) FROM items WHERE url = $1", url)
    assert saved == 0


@pytest.mark.parametrize(("reason", "rule"), [("ok\u0000", "nul"), ("ok\ud800", "lone_surrogate"),
                                              ("ok\u001b[31m", "control_character")])
def test_a_decision_with_hostile_reason_is_refused_before_it_is_sent(reason: str, rule: str
                                                                     ) -> None:
    with pytest.raises(ValueError, match="string_unicode" if rule == "lone_surrogate" else rule):
        DecisionIn(decision="approve", reason=reason, request_id="r-1", draft_version=1)
    kept = DecisionIn(decision="approve", reason="line one\n\tline two", request_id="r-1",
                      draft_version=1)
    assert kept.reason.startswith("line one")

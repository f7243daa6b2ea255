"""The inbox's forms and what they answer before anything is decided, signed in or out: a post
without a session hears what any unauthenticated post hears whatever its body, and no form
takes one of two values of a field sent twice."""

from __future__ import annotations

import httpx
import pytest

from tests.http.edge_decisions_support import CSRF
from tests.http.items_support import bearer
from tollgate.http import review_service as rs
from tollgate.http.deps import Services

DECISION_FORM = f"csrf={CSRF}&reason=ok&request_id=r-1&draft_version=1&decision=approve"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}



@pytest.mark.parametrize("extra", [
    "",  # the plain unauthenticated post: the answer the others must give
    "&decision=reject", "&draft_version=2", "&role=care_lead&role=compliance", "&x%00=1&x%00=2",
], ids=["once", "decision", "draft_version", "role", "unknown"])
@pytest.mark.parametrize("session", ["", "tollgate_token=not-a-token; "], ids=["none", "bad"])
async def test_a_form_without_a_good_session_goes_to_the_login_page_whatever_its_body(
        api: httpx.AsyncClient, decided: list[rs.DecisionIn], extra: str,
        session: str) -> None:
    # The duplicate check ran first: 422 naming the field, before the session was looked at.
    answer = await api.post("/inbox/review/event%2Facme%2Fk-1/decision",
                            content=DECISION_FORM + extra,
                            headers={**FORM, "Cookie": f"{session}tollgate_csrf={CSRF}"})
    assert (answer.status_code, answer.headers.get("location")) == (303, "/inbox/login")
    assert decided == []


@pytest.mark.parametrize("session", ["none", "bad", "good"])
async def test_a_csrf_field_sent_twice_is_refused_signed_in_or_not(
        api: httpx.AsyncClient, http_services: Services, decided: list[rs.DecisionIn],
        session: str) -> None:
    token = {"none": "", "bad": "not-a-token",
             "good": bearer(http_services, "ann", role="care_lead")["Authorization"][7:]}
    cookie = f"tollgate_token={token[session]}; " if token[session] else ""
    answer = await api.post("/inbox/review/event%2Facme%2Fk-1/decision",
                            content=f"csrf=forged&{DECISION_FORM}",
                            headers={**FORM, "Cookie": f"{cookie}tollgate_csrf={CSRF}"})
    # The last value matched the cookie: the CSRF check passed on one of two values.
    assert answer.status_code == 403, answer.text
    assert answer.json()["detail"].startswith("csrf: sent more than once")
    assert decided == []


async def login_page_csrf(api: httpx.AsyncClient) -> str:
    return (await api.get("/inbox/login")).cookies["tollgate_csrf"]


@pytest.mark.parametrize("twice", ["token", "csrf"])
async def test_a_login_form_holding_a_field_twice_signs_nobody_in(
        api: httpx.AsyncClient, http_services: Services, twice: str) -> None:
    csrf = await login_page_csrf(api)
    good = bearer(http_services, "ann", role="care_lead")["Authorization"][7:]
    fields = [("token", "someone-else"), ("token", good), ("csrf", csrf)] if twice == "token" \
        else [("csrf", "forged"), ("csrf", csrf), ("token", good)]
    answer = await api.post("/inbox/login", content=str(httpx.QueryParams(fields)),
                            headers=FORM)
    # The last value was taken: signed in (303 and the token's cookie set).
    assert answer.status_code in (403, 422), answer.text
    assert answer.json()["detail"].startswith(f"{twice}: sent more than once")
    assert "tollgate_token" not in answer.headers.get("set-cookie", "")
    assert good not in answer.text


async def test_a_logout_form_holding_csrf_twice_signs_nobody_out(
        api: httpx.AsyncClient) -> None:
    answer = await api.post("/inbox/logout", content=f"csrf=forged&csrf={CSRF}", headers={
        **FORM, "Cookie": f"tollgate_token=kept; tollgate_csrf={CSRF}"})
    assert answer.status_code == 403, answer.text
    assert answer.json()["detail"].startswith("csrf: sent more than once")
    assert "tollgate_token" not in answer.headers.get("set-cookie", "")

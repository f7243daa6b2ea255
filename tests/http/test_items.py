"""``POST /v1/items``: the save commits the item and its tagging job and answers at once, even
with Temporal unreachable (the relay starts the tagging later); the user is the token's."""

from __future__ import annotations

import httpx

from tollgate.http.deps import Services
from tollgate.http.identity import issue_dev_token


def bearer(svc: Services, user: str) -> dict[str, str]:
    token = issue_dev_token(svc.settings.state_dir, reviewer=user, role="reader", tenant="acme")
    return {"Authorization": f"Bearer {token}"}


async def test_a_save_is_committed_while_temporal_is_down_and_a_resave_is_the_same_item(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    who = bearer(http_services, "u-save-1")
    page = {"url": "https://example.com/ui-design", "title": "UI design notes"}
    first = await api.post("/v1/items", json=page, headers=who)
    assert first.status_code == 201, first.text
    body = first.json()
    # Temporal is unreachable in this fixture: the save stands, the start waits for the relay.
    assert (body["created"], body["job_state"], body["started"]) == (True, "PENDING", False)
    again = await api.post("/v1/items", json=page, headers=who)
    assert again.status_code == 200
    assert (again.json()["item_id"], again.json()["created"]) == (body["item_id"], False)
    rows = await http_services.pool.fetch(
        "SELECT i.user_id, j.state FROM items i JOIN tagging_jobs j ON j.item_id = i.id"
        " WHERE i.id = $1", body["item_id"])
    assert [(r["user_id"], r["state"]) for r in rows] == [("u-save-1", "PENDING")]


async def test_an_invalid_capture_writes_nothing_and_no_token_is_refused(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    who = bearer(http_services, "u-save-2")
    bad = await api.post("/v1/items", json={"url": "ftp://x", "title": "t"}, headers=who)
    assert bad.status_code == 422 and "url" in bad.text
    assert await http_services.pool.fetchval(
        "SELECT count(*) FROM items WHERE user_id = 'u-save-2'") == 0
    anonymous = await api.post("/v1/items", json={"url": "https://e.com/", "title": "t"})
    assert anonymous.status_code == 401

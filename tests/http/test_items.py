"""``POST /v1/items``: the save commits the item and its tagging job and answers at once, even
with Temporal unreachable (the relay starts the tagging later); the user is the token's."""

from __future__ import annotations

import uuid

import httpx
import pytest

from adapters.postgres.tagging import TaggingStore
from contracts.errors import InvalidInput
from contracts.tagging import ItemCapture, JobFailure
from policies.tagging import tag_key
from tests.http.items_support import bearer
from tollgate.http.deps import Services


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


async def test_the_same_user_and_url_in_two_tenants_are_two_items(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    # A globex user with the same id as an acme user, saving the URL acme saved, used to get
    # acme's item (and its title and tags) back.
    user, page = f"u-{uuid.uuid4().hex[:8]}", {"url": "https://example.com/pricing",
                                               "title": "Acme pricing notes"}
    acme = await api.post("/v1/items", json=page, headers=bearer(http_services, user))
    globex = await api.post("/v1/items", json={**page, "title": "Globex pricing"},
                            headers=bearer(http_services, user, tenant="globex"))
    assert (acme.status_code, globex.status_code) == (201, 201), globex.text
    assert globex.json()["item_id"] != acme.json()["item_id"]
    again = await api.post("/v1/items", json=page,
                           headers=bearer(http_services, user, tenant="globex"))
    assert (again.status_code, again.json()["item_id"]) == (200, globex.json()["item_id"])
    rows = await http_services.pool.fetch(
        "SELECT i.tenant, i.title, j.tenant AS job_tenant FROM items i JOIN tagging_jobs j"
        " ON j.item_id = i.id WHERE i.user_id = $1 ORDER BY i.tenant", user)
    assert [tuple(r) for r in rows] == [("acme", "Acme pricing notes", "acme"),
                                        ("globex", "Globex pricing", "globex")]


async def test_a_viewer_may_not_save_and_nothing_is_written(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    answer = await api.post("/v1/items", json={"url": "https://e.com/v", "title": "t"},
                            headers=bearer(http_services, user, role="viewer"))
    assert answer.status_code == 403 and "role_not_allowed" in answer.json()["detail"]
    assert await http_services.pool.fetchval(
        "SELECT count(*) FROM items WHERE user_id = $1", user) == 0


async def test_tags_jobs_and_removals_stay_in_their_tenant(http_services: Services) -> None:
    store, user = TaggingStore(http_services.pool), f"u-{uuid.uuid4().hex[:8]}"
    await store.add_user_tag("acme", user, tag_key("Acme secret project"), "Acme secret project")
    await store.add_user_tag("globex", user, tag_key("Globex roadmap"), "Globex roadmap")
    saved = await store.save_item("globex", ItemCapture(user_id=user, url="https://e.com/t",
                                                        title="t"))
    claimed = await store.claim(saved.item_id, 1)
    # The model is shown only this tenant's tags: the other tenant's names never leak into it.
    assert claimed.user_tags == ["Globex roadmap"]
    await store.record_failure(JobFailure(item_id=saved.item_id, attempt=1, final=True,
                                          error="e"))
    with pytest.raises(InvalidInput, match="no tagging job"):
        await store.retry_job("acme", user, saved.item_id)
    assert not await store.remove_tag("acme", user, saved.item_id, "Globex roadmap")
    assert (await store.retry_job("globex", user, saved.item_id)).runs == 2


async def test_a_nul_in_an_item_is_422_naming_the_field_and_writes_nothing(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    answer = await api.post("/v1/items", json={"url": "https://e.com/n", "title": "a\x00b"},
                            headers=bearer(http_services, user))
    assert answer.status_code == 422 and "title" in answer.json()["detail"], answer.text
    assert await http_services.pool.fetchval(
        "SELECT count(*) FROM items WHERE user_id = $1", user) == 0


async def test_only_the_owner_retries_and_only_a_failed_job(
    api: httpx.AsyncClient, http_services: Services
) -> None:
    owner, stranger = f"u-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"
    saved = await api.post("/v1/items", json={"url": "https://e.com/retry", "title": "t"},
                           headers=bearer(http_services, owner))
    item_id = saved.json()["item_id"]
    url = f"/v1/items/{item_id}/retry"
    early = await api.post(url, headers=bearer(http_services, owner))
    assert early.status_code == 409 and "not_failed" in early.text  # PENDING: still going
    await TaggingStore(http_services.pool).record_failure(
        JobFailure(item_id=item_id, attempt=3, final=True, error="retryable: provider_503"))
    # A stranger, the owner's id in another tenant and a missing item: the same 404.
    for who, target in ((bearer(http_services, stranger), url),
                        (bearer(http_services, owner, tenant="globex"), url),
                        (bearer(http_services, owner), "/v1/items/999999999/retry")):
        refused = await api.post(target, headers=who)
        assert refused.status_code == 404 and "no_such_job" in refused.text
    assert (await api.post(url)).status_code == 401
    done = await api.post(url, headers=bearer(http_services, owner))
    assert done.status_code == 200, done.text
    # Temporal is unreachable in this fixture: the run is reset and left for the relay.
    assert done.json() == {"item_id": item_id, "job_state": "PENDING", "run": 2,
                           "started": False}
    assert (await api.post(url, headers=bearer(http_services, owner))).status_code == 409


@pytest.mark.parametrize("item_id", ["99999999999999999999", "0", "-1"])
async def test_an_item_id_postgresql_cannot_hold_is_422_naming_it(
    api: httpx.AsyncClient, http_services: Services, item_id: str
) -> None:
    # The path's bound (item_retry.ItemId) keeps it from asyncpg, whose DataError is a 500.
    answer = await api.post(f"/v1/items/{item_id}/retry",
                            headers=bearer(http_services, "u-edge-id"))
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == "$.item_id" and "9" * 20 not in answer.text

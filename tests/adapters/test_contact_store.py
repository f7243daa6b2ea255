"""A tenant's own contact points in PostgreSQL (migration 0095, ADR 0039): one live point per
tenant and number however it is written, removals kept, every change in the audit chain, and
an edit made around the store named by the chain's check."""

from __future__ import annotations

import asyncpg
import pytest

from adapters.postgres.audit import AuditStore
from adapters.postgres.contacts import ContactStore
from contracts.contacts import MAX_CONTACTS_PER_TENANT, TenantContact

HOTLINE = TenantContact(kind="phone", value="+84 28 3822 1234")


async def test_one_live_point_per_tenant_and_number_however_it_is_written(
    pool: asyncpg.Pool,
) -> None:
    store = ContactStore(pool)
    added, first = await store.add("t-unique", HOTLINE, actor="lee", reason="published hotline")
    again, held = await store.add("t-unique", TenantContact(kind="phone", value="028 3822 1234"),
                                  actor="kim", reason="same line")
    other, _ = await store.add("t-other", HOTLINE, actor="kim", reason="their hotline")

    assert (added, again, other) == ("added", "held", "added")
    assert held["id"] == first["id"] and held["value"] == "+84 28 3822 1234"
    assert await store.tenant_contacts("t-unique") == [HOTLINE]


async def test_a_removed_point_is_no_longer_read_but_stays_on_record(pool: asyncpg.Pool) -> None:
    store = ContactStore(pool)
    await store.add("t-remove", HOTLINE, actor="lee", reason="published hotline")

    removed = await store.remove("t-remove", "phone", "(028) 3822-1234", actor="kim",
                                 reason="line closed")
    assert removed is not None
    assert await store.remove("t-remove", "phone", "028 3822 1234", actor="kim",
                              reason="twice") is None
    assert await store.tenant_contacts("t-remove") == []
    (row,) = await store.rows("t-remove", removed=True)
    assert (row["added_by"], row["removed_by"], row["removed_reason"]) == (
        "lee", "kim", "line closed")
    # Added again later: a new point; the old row keeps its history.
    added, _ = await store.add("t-remove", HOTLINE, actor="lee", reason="line reopened")
    assert added == "added" and len(await store.rows("t-remove", removed=True)) == 2


async def test_a_tenant_holds_at_most_the_points_a_read_carries(pool: asyncpg.Pool) -> None:
    store = ContactStore(pool)
    for n in range(MAX_CONTACTS_PER_TENANT):
        point = TenantContact(kind="phone", value=f"+84 28 3822 {n:04d}")
        assert (await store.add("t-full", point, actor="lee", reason="line"))[0] == "added"

    one_more = TenantContact(kind="email", value="desk@full.vn")
    assert await store.add("t-full", one_more, actor="lee", reason="desk") == (
        "full", {"live": MAX_CONTACTS_PER_TENANT})
    # Already listed is still answered as such; a removal makes room.
    assert (await store.add("t-full", TenantContact(kind="phone", value="028 3822 0000"),
                            actor="lee", reason="again"))[0] == "held"
    await store.remove("t-full", "phone", "028 3822 0007", actor="kim", reason="closed")
    assert (await store.add("t-full", one_more, actor="lee", reason="desk"))[0] == "added"
    assert len(await store.tenant_contacts("t-full")) == MAX_CONTACTS_PER_TENANT


async def test_every_change_is_chained_and_a_point_is_never_deleted_or_rewritten(
    pool: asyncpg.Pool,
) -> None:
    store = ContactStore(pool)
    await store.add("t-chain", HOTLINE, actor="lee", reason="published hotline")
    await store.remove("t-chain", "phone", "+84 28 3822 1234", actor="kim", reason="closed")

    chain = await AuditStore(pool).chain("contacts/t-chain")
    assert [(e["source"], e["op"]) for e in chain] == [
        ("tenant_contacts", "INSERT"), ("tenant_contacts", "UPDATE")]
    assert (await AuditStore(pool).verify_all("t-chain"))[1] == []
    with pytest.raises(asyncpg.RaiseError, match="never deleted"):
        await pool.execute("DELETE FROM tenant_contacts WHERE tenant_id = 't-chain'")
    with pytest.raises(asyncpg.RaiseError, match="only by being removed"):
        await pool.execute("UPDATE tenant_contacts SET value = '+84 28 3822 9999', key ="
                           " '2838229999' WHERE tenant_id = 't-chain'")


async def test_a_point_written_around_the_triggers_is_named_by_the_check(
    pool: asyncpg.Pool,
) -> None:
    store = ContactStore(pool)
    await store.add("t-tamper", HOTLINE, actor="lee", reason="published hotline")
    async with pool.acquire() as conn:
        # What someone with the database's superuser could do: triggers off, number swapped.
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("UPDATE tenant_contacts SET value = '+84 90 123 4567',"
                           " key = '901234567' WHERE tenant_id = 't-tamper'")
        await conn.execute("INSERT INTO tenant_contacts (tenant_id, kind, value, key, added_by,"
                           " reason) VALUES ('t-tamper', 'email', 'x@evil.io', 'x@evil.io',"
                           " 'nobody', 'sneaked in')")
        await conn.execute("SET session_replication_role = origin")

    _, problems = await AuditStore(pool).verify_all("t-tamper")
    assert sorted(p.problem for p in problems) == [
        "row is not in the chain (written with the triggers off)",
        "row was edited after it was chained"]
    assert {p.workflow_id for p in problems} == {"contacts/t-tamper"}

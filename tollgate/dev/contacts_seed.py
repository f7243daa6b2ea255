"""The example tenants' own contact points, added when the dev stack starts (ADR 0039), so a
draft that quotes acme's or globex's hotline, in any writing of it, is not flagged foreign.

The same points their policy rule lists (policies/versions/2026-12-01.json), entered as an
operator would with `tollgate ops contacts add`: audited under the actor ``tollgate-dev``. A
tenant that already has rows (even removed ones) is left alone, so a point an operator removed
on this stack stays removed across restarts.
"""

from __future__ import annotations

from contracts.contacts import TenantContact

ACTOR = "tollgate-dev"
EXAMPLE_CONTACTS: dict[str, tuple[TenantContact, ...]] = {
    "acme": (TenantContact(kind="phone", value="+84 28 3822 1234"),
             TenantContact(kind="domain", value="acme-clinic.vn")),
    "globex": (TenantContact(kind="phone", value="+84 24 3936 5555"),),
}


async def seed_contacts(dsn: str) -> list[str]:
    """Add the example tenants' points where the tenant has none yet; returns who got them."""
    from adapters.postgres.contacts import ContactStore
    from adapters.postgres.pool import create_pool

    pool = await create_pool(dsn, max_size=2)
    try:
        store, seeded = ContactStore(pool), []
        for tenant, points in EXAMPLE_CONTACTS.items():
            if await store.rows(tenant, removed=True):
                continue
            for point in points:
                await store.add(tenant, point, actor=ACTOR,
                                reason="the example tenant's published contact point")
            seeded.append(tenant)
        return seeded
    finally:
        await pool.close()

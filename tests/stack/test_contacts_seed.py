"""The dev stack's example tenants get their published hotlines as their own contact points
(ADR 0039), once: a restart adds nothing, and a point an operator removed stays removed."""

from __future__ import annotations

import asyncpg

from adapters.postgres.contacts import ContactStore
from contracts import Draft
from policies.draft_validator import validate_draft
from policies.matrix import load_matrix
from tests.policies.output_shape_support import request
from tollgate.dev.contacts_seed import seed_contacts


async def test_the_example_hotlines_are_seeded_once_and_a_removal_stands(
    database_url: str, pool: asyncpg.Pool,
) -> None:
    assert await seed_contacts(database_url) == ["acme", "globex"]
    assert await seed_contacts(database_url) == []
    store = ContactStore(pool)
    acme = await store.tenant_contacts("acme")
    assert [(c.kind, c.value) for c in acme] == [("phone", "+84 28 3822 1234"),
                                                 ("domain", "acme-clinic.vn")]
    assert {r["added_by"] for r in await store.rows("globex")} == {"tollgate-dev"}

    # A demo draft quoting acme's hotline the national way passes acme's released rule.
    snapshot = load_matrix().rule_for("acme", "CARE_DUE")
    assert snapshot is not None
    req = request(snapshot.rule).model_copy(update={"tenant_contacts": tuple(acme)})
    assert validate_draft(Draft(message="Hi Lan, call us on 028 3822 1234."), req) == []

    await store.remove("globex", "phone", "+84 24 3936 5555", actor="lee", reason="moved")
    assert await seed_contacts(database_url) == []
    assert await store.tenant_contacts("globex") == []

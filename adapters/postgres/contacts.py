"""A tenant's own contact points (migration 0095, ADR 0039): what the context step reads for
the draft validator, and what `tollgate ops contacts` lists, adds and removes.

Every change is one row written (an insert, or the one update that marks a point removed);
the table's trigger chains it into the audit chain in the same transaction, so there is no
change without its audit entry and no second path to forget one.
"""

from __future__ import annotations

from typing import Any, Literal

import asyncpg

from adapters.postgres.pgtext import pg_text
from contracts.contacts import MAX_CONTACTS_PER_TENANT, ContactKind, TenantContact, contact_key

AddOutcome = Literal["added", "held", "full"]


class ContactStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def tenant_contacts(self, tenant_id: str) -> list[TenantContact]:
        """The tenant's live contact points, oldest first (at most ``MAX_CONTACTS_PER_TENANT``)."""
        rows = await self.pool.fetch(
            "SELECT kind, value FROM tenant_contacts WHERE tenant_id = $1 AND removed_at IS NULL"
            " ORDER BY id LIMIT $2", tenant_id, MAX_CONTACTS_PER_TENANT)
        return [TenantContact(kind=r["kind"], value=r["value"]) for r in rows]

    async def rows(self, tenant_id: str, *, removed: bool = False) -> list[dict[str, Any]]:
        """The tenant's rows for an operator: live ones, or with ``removed`` every row ever."""
        rows = await self.pool.fetch(
            "SELECT id, tenant_id, kind, value, key, added_by, added_at, reason, removed_by,"
            " removed_at, removed_reason FROM tenant_contacts WHERE tenant_id = $1"
            " AND ($2 OR removed_at IS NULL) ORDER BY id", tenant_id, removed)
        return [dict(r) for r in rows]

    async def add(self, tenant_id: str, contact: TenantContact, *, actor: str,
                  reason: str) -> tuple[AddOutcome, dict[str, Any]]:
        """Add a point. Returns what happened and the row: ``added`` (the new row), ``held``
        (the live row with the same key, left as it is) or ``full`` (the tenant already has
        ``MAX_CONTACTS_PER_TENANT`` live points: a point past the cap would never be read)."""
        async with self.pool.acquire() as conn, conn.transaction():
            # One change per tenant at a time, so the cap counts what is committed.
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                               f"tenant_contacts/{tenant_id}")
            held = await conn.fetchrow(
                "SELECT id, value, added_by, added_at FROM tenant_contacts WHERE tenant_id = $1"
                " AND kind = $2 AND key = $3 AND removed_at IS NULL",
                tenant_id, contact.kind, contact.key)
            if held is not None:
                return "held", dict(held)
            live = await conn.fetchval("SELECT count(*) FROM tenant_contacts WHERE tenant_id = $1"
                                       " AND removed_at IS NULL", tenant_id)
            if live >= MAX_CONTACTS_PER_TENANT:
                return "full", {"live": live}
            row = await conn.fetchrow(
                "INSERT INTO tenant_contacts (tenant_id, kind, value, key, added_by, reason)"
                " VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, value, added_by, added_at",
                tenant_id, contact.kind, contact.value, contact.key, pg_text(actor),
                pg_text(reason))
        assert row is not None  # an INSERT ... RETURNING returns its row
        return "added", dict(row)

    async def remove(self, tenant_id: str, kind: ContactKind, value: str, *, actor: str,
                     reason: str) -> dict[str, Any] | None:
        """Mark the live point that ``value`` keys to removed; None when there is none."""
        key = contact_key(kind, value)
        if key is None:
            return None
        row = await self.pool.fetchrow(
            "UPDATE tenant_contacts SET removed_by = $4, removed_at = now(), removed_reason = $5"
            " WHERE tenant_id = $1 AND kind = $2 AND key = $3 AND removed_at IS NULL"
            " RETURNING id, value, removed_at",
            tenant_id, kind, key, pg_text(actor), pg_text(reason))
        return dict(row) if row else None

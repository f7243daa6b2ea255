"""PostgreSQL store of the tagging domain: items, their one job row, tags, links, removals.

Everything belongs to a user of one tenant (``tenant`` on items, jobs and tags: migration 0081):
every lookup names both, so the same user id in two tenants is two people.

Idempotency is in the constraints: the partial unique index on (tenant, user, live URL) makes a
second save return the first item, the job row is keyed by item, links are keyed by (item, tag) and
written with ``ON CONFLICT DO NOTHING``. A job is claimed only from PENDING, so a workflow started
twice for one run tags once. Same pool as ``postgres_store.py`` (its ``create_pool`` migrates).
"""

from __future__ import annotations

import asyncpg
from asyncpg.pool import PoolConnectionProxy

from contracts.errors import InvalidInput, RejectedError, RetryableError
from contracts.tagging import (
    AppliedTag,
    ApplyTagsRequest,
    ItemCapture,
    JobFailure,
    JobState,
    SavedItem,
    TaggingInput,
    TagJob,
)

#: The user's tag names handed to the model so it can reuse them (alphabetical, bounded).
_USER_TAGS_IN_PROMPT = 50
_ERROR_CHARS = 500

_SAVE_SQL = """
WITH ins AS (
    INSERT INTO items (tenant, user_id, url, title, description, text)
    VALUES ($5, $1, $2, $3, $4, $6)
    ON CONFLICT (tenant, user_id, url) WHERE deleted_at IS NULL DO NOTHING
    RETURNING id
), job AS (
    INSERT INTO tagging_jobs (item_id, tenant, user_id, state)
    SELECT id, $5, $1, 'PENDING' FROM ins
    RETURNING item_id, state
)
SELECT item_id, state, true AS created FROM job
"""


def _db_error(exc: Exception) -> RetryableError:
    return RetryableError("db_unavailable", f"tagging store: {type(exc).__name__}")


class TaggingStore:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def save_item(self, tenant: str, capture: ItemCapture) -> SavedItem:
        """Insert the item and its PENDING job in one transaction, or return the live item the
        same user of ``tenant`` already saved at that URL (no second job, no second tagging)."""
        try:
            async with self._pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow(_SAVE_SQL, capture.user_id, capture.url,
                                          capture.title, capture.description, tenant,
                                          capture.text)
                if row is None:
                    row = await conn.fetchrow(
                        "SELECT i.id AS item_id, j.state, false AS created FROM items i"
                        " JOIN tagging_jobs j ON j.item_id = i.id"
                        " WHERE i.tenant = $3 AND i.user_id = $1 AND i.url = $2"
                        " AND i.deleted_at IS NULL", capture.user_id, capture.url, tenant)
        except (OSError, asyncpg.InterfaceError, asyncpg.PostgresConnectionError) as exc:
            raise _db_error(exc) from None
        assert row is not None, "the conflicting live item must exist in the same snapshot"
        return SavedItem(item_id=row["item_id"], created=row["created"],
                         job_state=JobState(row["state"]))

    async def mark_started(self, item_id: int, run: int) -> None:
        """Outbox mark: the workflow start of this run is durable."""
        await self._pool.execute(
            "UPDATE tagging_jobs SET started_at = now() WHERE item_id = $1 AND runs = $2",
            item_id, run)

    async def unstarted(self, limit: int = 100) -> list[tuple[int, int]]:
        """(item, run) of PENDING jobs with no known durable start, oldest first."""
        rows = await self._pool.fetch(
            "SELECT item_id, runs FROM tagging_jobs WHERE started_at IS NULL"
            " AND state = 'PENDING' ORDER BY created_at LIMIT $1", limit)
        return [(r["item_id"], r["runs"]) for r in rows]

    async def claim(self, item_id: int, attempt: int) -> TaggingInput:
        """PENDING -> PROCESSING and the item with its user's tag names; not claimed when the
        job is in any other state (a duplicate start, or already done)."""
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "UPDATE tagging_jobs j SET state = 'PROCESSING', attempt_count = $2,"
                " updated_at = now() FROM items i WHERE j.item_id = $1 AND i.id = j.item_id"
                " AND j.state = 'PENDING'"
                " RETURNING i.tenant, i.user_id, i.title, i.description, i.text, i.url",
                item_id, attempt)
            if row is None:
                state = await conn.fetchval(
                    "SELECT state FROM tagging_jobs WHERE item_id = $1", item_id)
                if state is None:
                    raise InvalidInput("no_such_job", f"no tagging job for item {item_id}")
                return TaggingInput(claimed=False, item_id=item_id, state=JobState(state))
            names = await conn.fetch(
                "SELECT name FROM tags WHERE tenant = $1 AND user_id = $2 ORDER BY name LIMIT $3",
                row["tenant"], row["user_id"], _USER_TAGS_IN_PROMPT)
        return TaggingInput(claimed=True, item_id=item_id, user_id=row["user_id"],
                            title=row["title"], description=row["description"],
                            text=row["text"], url=row["url"], user_tags=[n["name"] for n in names])

    async def apply_tags(self, request: ApplyTagsRequest, threshold: float) -> list[AppliedTag]:
        """Match each tag (exact key, then trigram >= ``threshold``, then new), link it unless
        the user removed that tag from this item, and mark the job SUCCEEDED: one transaction,
        so a retry after a crash either finds it all written or writes it all."""
        out: list[AppliedTag] = []
        async with self._pool.acquire() as conn, conn.transaction():
            owner = await conn.fetchrow(
                "SELECT tenant, user_id FROM tagging_jobs WHERE item_id = $1 FOR UPDATE",
                request.item_id)
            assert owner is not None, "a claimed job's row exists"
            for tag in request.tags:
                applied, tag_id = await _match(conn, (owner["tenant"], owner["user_id"]),
                                               tag.key, tag.name, threshold)
                removed = await conn.fetchval(
                    "SELECT EXISTS (SELECT 1 FROM item_tag_removals"
                    " WHERE item_id = $1 AND tag_id = $2)", request.item_id, tag_id)
                if removed:
                    applied = applied.model_copy(update={"how": "removed"})
                else:
                    await conn.execute(
                        "INSERT INTO item_tags (item_id, tag_id, source, confidence)"
                        " VALUES ($1, $2, 'model', $3) ON CONFLICT DO NOTHING",
                        request.item_id, tag_id, tag.confidence)
                out.append(applied)
            await conn.execute(
                "UPDATE tagging_jobs SET state = 'SUCCEEDED', last_error = NULL,"
                " updated_at = now() WHERE item_id = $1", request.item_id)
        return out

    async def record_failure(self, failure: JobFailure) -> JobState:
        """FAILED only on the last attempt; an earlier failure goes back to PENDING with the
        error, so nobody is offered a retry of work that is still going on."""
        state = JobState.FAILED if failure.final else JobState.PENDING
        await self._pool.execute(
            "UPDATE tagging_jobs SET state = $2, last_error = $3, attempt_count = $4,"
            " updated_at = now() WHERE item_id = $1 AND state IN ('PENDING', 'PROCESSING')",
            failure.item_id, state.value, failure.error[:_ERROR_CHARS], failure.attempt)
        return state

    async def retry_job(self, tenant: str, user_id: str, item_id: int) -> TagJob:
        """A manual retry: the owner only, from FAILED only; back to PENDING as a new run."""
        row = await self._pool.fetchrow(
            "UPDATE tagging_jobs SET state = 'PENDING', attempt_count = 0, runs = runs + 1,"
            " started_at = NULL, updated_at = now() WHERE item_id = $1 AND tenant = $2"
            " AND user_id = $3 AND state = 'FAILED' RETURNING *", item_id, tenant, user_id)
        if row is not None:
            return _job(row)
        row = await self._pool.fetchrow(
            "SELECT * FROM tagging_jobs WHERE item_id = $1 AND tenant = $2 AND user_id = $3",
            item_id, tenant, user_id)
        job = _job(row) if row else None
        if job is None:
            # The same answer for "not yours" and "does not exist": no probing of other users.
            raise InvalidInput("no_such_job", f"no tagging job for item {item_id}")
        raise RejectedError("not_failed", f"only a FAILED job can be retried (it is {job.state})")

    async def get_job(self, item_id: int) -> TagJob | None:
        row = await self._pool.fetchrow("SELECT * FROM tagging_jobs WHERE item_id = $1", item_id)
        return _job(row) if row else None

    async def jobs_by_state(self, tenant: str | None = None) -> dict[JobState, int]:
        """Counts per state (of every tenant, or of one): a missing consumer shows as PENDING
        growing."""
        rows = await self._pool.fetch(
            "SELECT state, count(*) AS n FROM tagging_jobs"
            " WHERE $1::text IS NULL OR tenant = $1 GROUP BY 1", tenant)
        counts = dict.fromkeys(JobState, 0)
        counts.update({JobState(r["state"]): r["n"] for r in rows})
        return counts

    async def recent_jobs(self, state: JobState, limit: int, tenant: str | None = None
                          ) -> list[TagJob]:
        """The latest ``limit`` jobs in ``state`` (optionally of one tenant), newest first."""
        rows = await self._pool.fetch(
            "SELECT * FROM tagging_jobs WHERE state = $1 AND ($2::text IS NULL OR tenant = $2)"
            " ORDER BY updated_at DESC, item_id DESC LIMIT $3", state.value, tenant, limit)
        return [_job(r) for r in rows]

    async def item_tags(self, item_id: int) -> list[str]:
        rows = await self._pool.fetch(
            "SELECT t.name FROM item_tags it JOIN tags t ON t.id = it.tag_id"
            " WHERE it.item_id = $1 ORDER BY t.name", item_id)
        return [r["name"] for r in rows]

    async def add_user_tag(self, tenant: str, user_id: str, key: str, name: str) -> int:
        """A tag the user made themselves (the UI's "new tag"); ``key`` from the same rules."""
        tag_id: int = await self._pool.fetchval(
            "INSERT INTO tags (tenant, user_id, key, name) VALUES ($1, $2, $3, $4)"
            " ON CONFLICT (tenant, user_id, key) DO UPDATE SET name = tags.name RETURNING id",
            tenant, user_id, key, name)
        return tag_id

    async def remove_tag(self, tenant: str, user_id: str, item_id: int, tag_name: str) -> bool:
        """Take a tag off an item and remember it, so no retry brings it back."""
        async with self._pool.acquire() as conn, conn.transaction():
            tag_id = await conn.fetchval(
                "DELETE FROM item_tags it USING tags t, items i WHERE it.tag_id = t.id"
                " AND i.id = it.item_id AND it.item_id = $1 AND i.tenant = $2 AND i.user_id = $3"
                " AND t.name = $4 RETURNING it.tag_id", item_id, tenant, user_id, tag_name)
            if tag_id is None:
                return False
            await conn.execute(
                "INSERT INTO item_tag_removals (item_id, tag_id, removed_by) VALUES ($1, $2, $3)",
                item_id, tag_id, user_id)
        return True


async def _match(conn: PoolConnectionProxy, owner: tuple[str, str], key: str, name: str,
                 threshold: float) -> tuple[AppliedTag, int]:
    tenant, user_id = owner
    row = await conn.fetchrow(
        "SELECT id, name FROM tags WHERE tenant = $1 AND user_id = $2 AND key = $3",
        tenant, user_id, key)
    if row:
        return AppliedTag(name=row["name"], key=key, how="exact"), row["id"]
    row = await conn.fetchrow(
        "SELECT id, name, key, similarity(key, $3) AS s FROM tags WHERE tenant = $1"
        " AND user_id = $2 AND similarity(key, $3) >= $4 ORDER BY s DESC, id LIMIT 1",
        tenant, user_id, key, threshold)
    if row:
        return (AppliedTag(name=row["name"], key=row["key"], how="similar",
                           similarity=round(row["s"], 3)), row["id"])
    tag_id = await conn.fetchval(
        "INSERT INTO tags (tenant, user_id, key, name) VALUES ($1, $2, $3, $4)"
        " ON CONFLICT (tenant, user_id, key) DO UPDATE SET name = tags.name RETURNING id",
        tenant, user_id, key, name)
    return AppliedTag(name=name, key=key, how="new"), tag_id


def _job(row: asyncpg.Record) -> TagJob:
    return TagJob(item_id=row["item_id"], user_id=row["user_id"], state=JobState(row["state"]),
                  attempt_count=row["attempt_count"], last_error=row["last_error"],
                  runs=row["runs"], tenant=row["tenant"], updated_at=row["updated_at"])

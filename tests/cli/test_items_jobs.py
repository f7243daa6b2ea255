"""`tollgate items jobs --status S`: the last 100 SUCCEEDED and 500 FAILED jobs can be looked at,
newest first, with why each failed; the counts stay the default answer."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg

from tests.cli.helpers import base_env, tollgate

TENANT = "jobs-cli"


async def seed(pool: asyncpg.Pool, state: str, n: int, error: str | None,
               tenant: str = TENANT) -> None:
    """``n`` items of ``tenant`` with their jobs in ``state``, updated a second apart."""
    await pool.execute(
        "WITH made AS (INSERT INTO items (tenant, user_id, url, title)"
        " SELECT $1, 'u-' || g, 'https://example.com/' || $2 || '/' || g, 'page ' || g"
        " FROM generate_series(1, $3) g RETURNING id)"
        " INSERT INTO tagging_jobs (item_id, tenant, user_id, state, attempt_count, last_error,"
        " updated_at)"
        " SELECT id, $1, 'u', $2, 3, $4, now() - (id || ' seconds')::interval FROM made",
        tenant, state, n, error)


async def test_the_latest_failed_and_succeeded_jobs_are_listed(
        pool: asyncpg.Pool, database_url: str, tmp_path: Path) -> None:
    await seed(pool, "FAILED", 510, "retryable: provider_503")
    await seed(pool, "SUCCEEDED", 105, None)
    env = base_env(tmp_path, DATABASE_URL=database_url)

    failed = tollgate("items", "jobs", "--status", "failed", "--tenant", TENANT, "--json",
                      env=env)
    assert failed.code == 0, failed.text
    rows = json.loads(failed.out)
    assert len(rows) == 500
    assert {r["state"] for r in rows} == {"FAILED"}
    assert rows[0]["last_error"] == "retryable: provider_503" and "user_id" not in rows[0]
    # Newest first: the seed dated the lowest item ids latest; the ten oldest are not shown.
    ids = [r["item_id"] for r in rows]
    first = await pool.fetchval("SELECT min(item_id) FROM tagging_jobs WHERE tenant = $1"
                                " AND state = 'FAILED'", TENANT)
    assert ids == list(range(first, first + 500))

    done = tollgate("items", "jobs", "--status", "SUCCEEDED", "--tenant", TENANT, env=env)
    assert done.code == 0, done.text
    lines = done.out.splitlines()
    assert len(lines) == 100 and all(" SUCCEEDED " in line for line in lines)

    counts = tollgate("items", "jobs", "--json", env=env)
    assert json.loads(counts.out)["FAILED"] >= 510
    # --tenant narrows the counts too: it was read with --status only, and the counts of every
    # tenant came back under a --tenant naming one.
    await seed(pool, "FAILED", 1, "other tenant", tenant="jobs-other")
    mine = tollgate("items", "jobs", "--tenant", TENANT, "--json", env=env)
    assert mine.code == 0, mine.text
    assert json.loads(mine.out) == {"PENDING": 0, "PROCESSING": 0, "SUCCEEDED": 105,
                                    "FAILED": 510}


def test_a_state_with_no_jobs_says_so(database_url: str, tmp_path: Path) -> None:
    env = base_env(tmp_path, DATABASE_URL=database_url)
    said = tollgate("items", "jobs", "--status", "failed", "--tenant", "jobs-none", env=env)
    assert said.code == 0 and said.out.strip() == "no FAILED tagging jobs for jobs-none", said.text
    said = tollgate("items", "jobs", "--status", "FAILED", "--tenant", "jobs-none", "--json",
                    env=env)
    assert said.code == 0 and json.loads(said.out) == [], said.text


def test_an_unknown_status_is_one_line_and_exit_2(tmp_path: Path) -> None:
    said = tollgate("items", "jobs", "--status", "DONE",
                    env=base_env(tmp_path, DATABASE_URL="postgresql://nobody@127.0.0.1:1/x"))
    assert said.code == 2 and said.clean()
    assert "--status" in said.err

"""`tollgate ops status`: the operator's one screen, from PostgreSQL alone, with an exit code
that says whether a person is needed (6) or not (0)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from tests.cli.helpers import base_env, tollgate
from tests.cli.ops_status_support import add_event, status
from tests.pg_databases import fresh_database
from tollgate.runtime.exits import Exit


@pytest.fixture
async def calm(pg_server: str) -> AsyncIterator[str]:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await add_event(conn, "acme", "SUCCEEDED", timedelta(hours=5))
    await add_event(conn, "acme", "AWAITING_REVIEW", timedelta(minutes=5), timedelta(hours=3))
    await conn.close()
    yield url


@pytest.fixture
async def troubled(pg_server: str) -> AsyncIterator[str]:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await add_event(conn, "acme", "AWAITING_REVIEW", timedelta(hours=6), -timedelta(hours=2))
    await add_event(conn, "globex", "EXECUTING", timedelta(hours=3))
    await conn.execute(
        "INSERT INTO dead_letters (workflow_id, error_class, error_code, state, owner,"
        " replay_plan) VALUES ('event/acme/x', 'unknown_write', 'unreconciled_write',"
        " 'STOPPED', 'ops', 'look it up')")
    await conn.execute(
        "INSERT INTO kill_switches (adapter, tenant_id, closed, reason, changed_by)"
        " VALUES ('messaging', 'acme', true, 'incident', 'kim')")
    await conn.close()
    yield url


def test_a_calm_system_needs_nobody(calm: str, temporal: str, tmp_path: Path) -> None:
    code, out = status(calm, tmp_path, temporal=temporal)
    assert code == Exit.OK
    assert "needs a human: nothing" in out
    assert "AWAITING_REVIEW" in out and "receipt sweep: never ran" in out


def test_what_needs_a_human_is_named_and_the_exit_code_says_so(
    troubled: str, temporal: str, tmp_path: Path
) -> None:
    code, out = status(troubled, tmp_path, "--json")
    report = json.loads(out)
    assert code == Exit.ATTENTION
    why = " | ".join(report["needs_a_human"])
    assert "1 review(s) past their SLA" in why
    assert "1 dead letter(s) waiting" in why
    assert "oldest EXECUTING record is 3h 00m old" in why
    assert "1 kill switch(es) closed" in why
    assert report["reviews"] == [{"tenant_id": "acme", "waiting": 1, "past_sla": 1}]
    assert report["dead_letters"] == [{"reason": "unreconciled_write", "count": 1}]
    # Thresholds are the operator's: raised high enough, only the closed switch remains.
    code, out = status(troubled, tmp_path, "--json", "--max-past-sla", "5",
                       "--max-dead-letters", "5", "--max-open-minutes", "600",
                       temporal=temporal)
    assert code == Exit.ATTENTION
    assert json.loads(out)["needs_a_human"] == ["1 kill switch(es) closed"]


def test_postgresql_down_is_one_line(tmp_path: Path) -> None:
    said = tollgate("ops", "status", env=base_env(
        tmp_path, DATABASE_URL="postgresql://nobody@127.0.0.1:1/none"))
    assert said.code == Exit.UNREACHABLE and said.clean()
    assert said.err.strip().count("\n") == 0

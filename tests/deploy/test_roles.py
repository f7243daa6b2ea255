"""The one-off roles a deployment runs besides the workers (issue 13, item 1): the migrations
job applies the schema once and is a no-op after, and the codec server refuses to start
without a token it could share with the Web UI."""

from __future__ import annotations

import asyncpg
import pytest

from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.pg_databases import empty_database
from tollgate.codec.server import main as codec_main
from tollgate.config.settings import Settings


async def test_migrate_job_applies_the_schema_once(pg_server: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    url = await empty_database(pg_server, "m")
    settings = Settings.from_env({"DATABASE_URL": url})
    assert await run_ops(["migrate"], settings) == 0
    assert "applied 0001_init.sql" in capsys.readouterr().out
    assert await run_ops(["migrate"], settings) == 0
    assert capsys.readouterr().out.strip() == "schema up to date"
    conn = await asyncpg.connect(url)
    try:
        assert await conn.fetchval("SELECT to_regclass('receipts') IS NOT NULL")
    finally:
        await conn.close()


@pytest.mark.parametrize("env, says", [
    ({}, "TOLLGATE_CODEC_TOKEN"),
    ({"TOLLGATE_CODEC_TOKEN": "short"}, "TOLLGATE_CODEC_TOKEN"),
    ({"TOLLGATE_CODEC_TOKEN": "x" * 32, "TOLLGATE_CODEC_PORT": "http"}, "TOLLGATE_CODEC_PORT"),
])
def test_codec_server_refuses_bad_settings_in_one_line(env: dict[str, str], says: str) -> None:
    with pytest.raises(SystemExit, match=says):
        codec_main({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE), **env})

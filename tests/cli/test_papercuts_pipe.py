"""A reader that stops reading (`tollgate … | head -1`) is a normal end of a command: exit 141,
as for any Unix tool cut off that way, and nothing on stderr (docs/cli.md, "Exit codes")."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import asyncpg
import pytest

from tests.cli.helpers import ROOT, TOLLGATE, Said, base_env
from tollgate.cli.output import CLOSED_OUTPUT


def into_closed_pipe(*args: str, env: dict[str, str]) -> Said:
    """Run ``tollgate ARGS`` with its standard output a pipe nobody reads any more: every
    write fails, as after `| head -c 0`, whenever the command writes."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([TOLLGATE, *args], env=env, cwd=ROOT, stdout=write_end,  # noqa: S603
                              stderr=subprocess.PIPE, text=True, timeout=60, check=False)
    finally:
        os.close(write_end)
    return Said(done.returncode, "", done.stderr)


@pytest.fixture
async def dead_letter_db(database_url: str, pool: asyncpg.Pool) -> str:
    """A migrated database holding one dead letter, so `ops dlq list --json` has rows to print."""
    await pool.execute(
        "INSERT INTO dead_letters (workflow_id, tenant_id, event_id, error_class, error_code,"
        " state, owner, replay_plan) VALUES ('event/acme/pipe-1', 'acme', 'pipe-1',"
        " 'dead_letter', 'crm_403', 'DEAD_LETTERED', 'integrations-oncall', 'read it')"
        " ON CONFLICT DO NOTHING")
    return database_url


@pytest.mark.parametrize("argv", [["ops", "dlq", "list", "--json"], ["ops", "dlq", "list"],
                                  ["ops", "dlq", "show", "1"]])
def test_a_closed_stdout_ends_quietly_with_141(dead_letter_db: str, tmp_path: Path,
                                               argv: list[str]) -> None:
    said = into_closed_pipe(*argv, env=base_env(tmp_path, DATABASE_URL=dead_letter_db))
    assert said.code == CLOSED_OUTPUT == 141, said.err
    assert said.err == ""


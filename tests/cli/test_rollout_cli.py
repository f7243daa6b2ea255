"""`tollgate ops rollout`: audited, and a move to a mode that sends real events (canary,
assisted) is refused without a passing certification of this policy release and this code."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.rollout import RolloutStore
from tests.cli.helpers import run_ops
from tests.cli.rollout_support import CANARY, settings
from tollgate.ops.certify import catalogue_digest, catalogue_nodes
from tollgate.ops.release_identity import code_commit, policy_version
from tollgate.runtime.exits import Exit

DIGEST = catalogue_digest(catalogue_nodes())


async def test_canary_refused_without_certification_then_allowed_and_audited(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = settings(database_url, tmp_path)
    assert await run_ops(CANARY, s, role="change_owner") == Exit.REFUSED
    err = capsys.readouterr().err.strip()
    assert "no passing certification" in err and "\n" not in err
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    try:
        assert await pool.fetchval("SELECT count(*) FROM rollout_modes") == 0
        # Shadow sends nothing, so it needs no certification.
        shadow = [*CANARY[:6], "shadow", *CANARY[9:]]
        assert await run_ops(shadow, s, role="change_owner") == Exit.OK
        store = RolloutStore(pool)
        # A failed certification of this code does not count either.
        await store.record_certification(policy_version=policy_version(),
                                         code_commit=code_commit(), catalogue=DIGEST,
                                         passed=False,
                                         tests_passed=3, tests_failed=1, pack_dir="x")
        # Nor does a passing run of a hand-picked subset of the catalogue.
        await store.record_certification(policy_version=policy_version(),
                                         code_commit=code_commit(), catalogue="subset",
                                         passed=True, tests_passed=1, tests_failed=0,
                                         pack_dir="x")
        assert await run_ops(CANARY, s, role="change_owner") == Exit.REFUSED
        await store.record_certification(policy_version=policy_version(),
                                         code_commit=code_commit(), catalogue=DIGEST,
                                         passed=True,
                                         tests_passed=4, tests_failed=0, pack_dir="x")
        assert await run_ops(CANARY, s, role="change_owner") == Exit.OK
        row = await store.mode_of("acme", "messaging")
        assert row is not None and (row["mode"], row["canary_remaining"]) == ("canary", 5)
        audit = await pool.fetch("SELECT actor, detail FROM audit WHERE action = 'rollout'"
                                 " ORDER BY id")
        assert [(a["actor"], json.loads(a["detail"])) for a in audit] == [
            ("op.kim", {"to": "shadow", "from": None, "canary": None, "reason": "week two",
                        "percent": None}),
            ("op.kim", {"to": "canary", "from": "shadow", "canary": 5, "reason": "week two",
                        "percent": None}),
        ]
    finally:
        await pool.close()


async def test_canary_without_a_count_is_a_usage_error(
    database_url: str, tmp_path: Path
) -> None:
    import click

    with pytest.raises(click.UsageError, match="--canary N"):
        await run_ops(CANARY[:-4] + CANARY[-2:], settings(database_url, tmp_path),
                      role="change_owner")

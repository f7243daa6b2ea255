"""`tollgate certify` on a tiny catalogue: the pack holds every artefact with its evidence, the
certification is recorded, and a failing (or missing) fixture makes it refuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from policies.matrix import newest_matrix_file
from tests.cli.helpers import run_ops
from tests.cli.rollout_support import CANARY, settings
from tollgate.cli.certify import certify
from tollgate.cli.common import run_in_loop
from tollgate.ops.certify import catalogue_digest
from tollgate.ops.release_identity import code_commit, policy_version
from tollgate.runtime.exits import Exit

PASSING = ["tests/policies/test_gate.py::test_consent_is_only_demanded_where_the_rule_requires_it",
           "tests/policies/test_matrix.py::test_released_files_are_never_edited"]


async def run_certify(args: list[str], s: Any) -> int:
    work: Any = certify.main(args, prog_name="tollgate certify", standalone_mode=False)
    return await run_in_loop(work, s)


def catalogue(tmp_path: Path, nodes: list[str]) -> Path:
    path = tmp_path / "fixtures.md"
    rows = "\n".join(f"| {i} | scenario | `{node}` |" for i, node in enumerate(nodes))
    path.write_text(f"| # | fixture | test |\n|---|---|---|\n{rows}\n")
    return path


async def test_certify_writes_the_pack_with_evidence_and_records_it(
    database_url: str, tmp_path: Path
) -> None:
    s, out = settings(database_url, tmp_path), tmp_path / "pack"
    code = await run_certify(["--out", str(out), "--catalogue",
                              str(catalogue(tmp_path, PASSING))], s)
    assert code == Exit.OK
    evidence = json.loads((out / "evidence.json").read_text())
    assert evidence["certified"] is True and evidence["tests_passed"] == 2
    assert (evidence["commit"], evidence["policy_version"]) == (code_commit(), policy_version())
    assert sorted(r["outcome"] for r in evidence["results"]) == ["passed"] * 2
    assert (out / "event-schema" / "CARE_DUE.v3.json").exists()
    assert "stateDiagram-v2" in (out / "state-diagram.md").read_text()
    assert (out / "authority-matrix.json").read_text() == newest_matrix_file().read_text()
    for name in ("receipt-contract.md", "retry-matrix.md", "dead-letter-runbook.md",
                 "threat-checklist.md", "README.md", "pytest.log"):
        assert (out / name).stat().st_size > 0, name
    assert "PASSED" in (out / "README.md").read_text()
    pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
    try:
        row = await pool.fetchrow("SELECT * FROM certifications ORDER BY id DESC LIMIT 1")
    finally:
        await pool.close()
    assert row["passed"] and row["catalogue"] == catalogue_digest(PASSING)
    # A subset's certification is on record, yet it opens no canary.
    assert await run_ops(CANARY, s, role="change_owner") == Exit.REFUSED


async def test_certify_refuses_when_a_fixture_does_not_pass(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s, out = settings(database_url, tmp_path), tmp_path / "pack"
    missing = "tests/policies/test_gate.py::test_that_does_not_exist"
    code = await run_certify(["--out", str(out), "--no-record", "--catalogue",
                              str(catalogue(tmp_path, [PASSING[0], missing]))], s)
    assert code == Exit.REFUSED
    assert json.loads((out / "evidence.json").read_text())["certified"] is False
    assert "FAILED" in capsys.readouterr().out

"""The release gate where Tollgate runs: the wheel installed outside the checkout (no git, no
docs/) knows the commit it was built from and ships the fixture catalogue, and with them
`tollgate certify` and `tollgate ops rollout` move a tenant shadow -> canary -> assisted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.deploy.files import ROOT
from tests.deploy.wheel import Installed
from tollgate.ops.release_identity import code_commit
from tollgate.runtime.identity import issue_dev_token

#: Two quick catalogue tests standing in for the whole catalogue, which runs for minutes.
QUICK = ["tests/policies/test_gate.py::test_consent_is_only_demanded_where_the_rule_requires_it",
         "tests/policies/test_matrix.py::test_released_files_are_never_edited"]


def rollout(to: str, *extra: str) -> list[str]:
    return ["ops", "rollout", "--tenant", "acme", "--adapter", "messaging", "--to", to, *extra,
            "--reason", f"to {to}"]


def test_the_wheel_ships_the_catalogue_and_the_commit_it_was_built_from(
        installed: Installed) -> None:
    shipped = installed.target / "tollgate" / "ops" / "fixtures.md"
    assert shipped.read_text() == (ROOT / "docs" / "fixtures.md").read_text()
    said = installed.run("-c", "from tollgate.ops.release_identity import code_commit;"
                         " print(code_commit())")
    assert said.returncode == 0, said.stderr
    # Run outside any git checkout: only the build can have told it.
    assert said.stdout.strip() == code_commit() != "unknown"


def test_the_installed_release_certifies_and_moves_a_tenant_to_assisted(
        installed: Installed, database_url: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The installed package, its shipped catalogue cut to two quick tests.
    site = tmp_path / "site"
    shutil.copytree(installed.target, site)
    rows = "\n".join(f"| {i} | quick | `{node}` |" for i, node in enumerate(QUICK, 1))
    (site / "tollgate" / "ops" / "fixtures.md").write_text(
        f"| # | fixture | test |\n|---|---|---|\n{rows}\n")
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("TOLLGATE_KEYS_FILE", str(ROOT / "tests" / "fixtures" / "test_keys.json"))
    # A rollout change is a change owner's (policies/authority.py): their token, from the dev
    # key of the state folder the installed command verifies with.
    monkeypatch.setenv("TOLLGATE_TOKEN", issue_dev_token(
        tmp_path / "state", reviewer="op.kim", role="change_owner", tenant="acme"))

    said = installed.tollgate(*rollout("shadow"), path=site)
    assert said.returncode == 0, said.stderr
    said = installed.tollgate(*rollout("canary", "--canary", "3"), path=site)
    assert said.returncode == 1 and "no passing certification" in said.stderr, said.stderr

    pack = tmp_path / "pack"
    said = installed.tollgate("certify", "--out", str(pack), "--checkout", str(ROOT),
                              path=site)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "PASSED: 2 passed, 0 failed" in said.stdout
    evidence = json.loads((pack / "evidence.json").read_text())
    assert evidence["commit"] == code_commit() and evidence["tests_passed"] == 2

    for step in (rollout("canary", "--canary", "3"), rollout("assisted")):
        said = installed.tollgate(*step, path=site)
        assert said.returncode == 0, said.stderr
    said = installed.tollgate("ops", "modes", "--json", path=site)
    assert said.returncode == 0, said.stderr
    (row,) = [r for r in json.loads(said.stdout) if r["tenant_id"] == "acme"]
    assert row["mode"] == "assisted"


def test_certify_needs_a_checkout_for_its_tests(installed: Installed, tmp_path: Path) -> None:
    said = installed.tollgate("certify", "--out", str(tmp_path / "pack"), "--no-record")
    assert said.returncode == 2
    assert "pass --checkout" in said.stderr and "\n" not in said.stderr.strip()

"""The release gate: run the fixture catalogue, write the acceptance pack (docs/rollout.md).

The pack is copied from the files that are the contract (schemas, docs, the policy release), so
it cannot drift from them; ``evidence.json`` ties it to the test results, the commit and the
policy version. `tollgate ops rollout` trusts a certification only for the catalogue the
package ships (``docs/fixtures.md`` as built into ``tollgate/ops/fixtures.md``; its digest is
recorded), so a run on a hand-picked subset opens nothing. The tests themselves run in a checkout
(``--checkout``, by default the one an editable install lives in): the wheel ships none.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tollgate.ops.release_identity import ROOT, catalogue_file, package_version
from tollgate.runtime.exits import Exit, Failure

_NODE = re.compile(r"`(tests/[\w/.-]+\.py(?:::[\w\[\]-]+)?)`")

#: (pack file, source file, what it is). A missing source is listed as missing, never faked.
_COPIES = (
    ("receipt-contract.md", "docs/receipts.md", "idempotency and receipt contract"),
    ("retry-matrix.md", "docs/errors.md", "error taxonomy and retry matrix"),
    ("dead-letter-runbook.md", "docs/runbook.md", "runbook (dead letters, kill switch, sweep)"),
    ("threat-checklist.md", "docs/security.md", "threats, data map and what the tests prove"),
    ("rollout.md", "docs/rollout.md", "rollout modes and this gate"),
    ("fixtures.md", "docs/fixtures.md", "the fixture catalogue"),
)


@dataclass
class CatalogueRun:
    node_ids: list[str]
    results: list[dict[str, Any]] = field(default_factory=list)
    exit_code: int = 0

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r["outcome"] == "passed")

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r["outcome"] in ("failed", "error"))

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.passed > 0 and self.failed == 0


def catalogue_nodes(path: Path | None = None) -> list[str]:
    """The test node ids named in the catalogue's table (the shipped one unless ``path``), in
    order, without repeats."""
    path = path or catalogue_file()
    # No fallback: with no node ids the child pytest would run the whole suite, and a digest of
    # a stand-in list would certify something nobody wrote down.
    try:
        found = _NODE.findall(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise Failure(Exit.FILE, f"cannot read the fixture catalogue {path}: "
                      f"{exc.strerror or exc}") from None
    if not found:
        raise Failure(Exit.FILE, f"the fixture catalogue {path} names no test "
                      "(`tests/....py::test_name` in its table)")
    return list(dict.fromkeys(found))


def catalogue_digest(node_ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(node_ids)).encode()).hexdigest()[:16]


def run_catalogue(node_ids: list[str], work: Path, checkout: Path = ROOT) -> CatalogueRun:
    """Run the node ids with pytest in a child process, in ``checkout``, and read its JUnit
    report."""
    junit = work / "junit.xml"
    proc = subprocess.run(  # noqa: S603 - our interpreter, node ids from our own catalogue
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"--junitxml={junit}", *node_ids], cwd=checkout, capture_output=True, text=True,
        check=False)
    (work / "pytest.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    run = CatalogueRun(node_ids, exit_code=proc.returncode)
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):  # noqa: S314
            outcome = "passed"
            for tag in ("failure", "error", "skipped"):
                if case.find(tag) is not None:
                    outcome = {"failure": "failed"}.get(tag, tag)
            run.results.append({
                "test": f"{case.get('classname', '')}::{case.get('name', '')}",
                "outcome": outcome, "seconds": float(case.get("time") or 0)})
    return run


def _state_diagram(checkout: Path) -> str:
    try:
        text = (checkout / "docs" / "architecture.md").read_text(encoding="utf-8")
    except OSError:
        text = ""
    match = re.search(r"## States\s+(```mermaid.*?```)", text, re.S)
    body = match[1] if match else "(no state diagram found in docs/architecture.md)"
    return f"# State diagram\n\nFrom `docs/architecture.md`.\n\n{body}\n"


def write_pack(out: Path, run: CatalogueRun, *, commit: str, policy_version: str,
               policy_file: Path, checkout: Path = ROOT) -> dict[str, Any]:
    """Write the acceptance pack into ``out``; returns the evidence it recorded."""
    out.mkdir(parents=True, exist_ok=True)
    listed: list[tuple[str, str, str]] = []
    schemas = out / "event-schema"
    schemas.mkdir(exist_ok=True)
    import contracts

    for schema in sorted((Path(contracts.__file__).parent / "schemas").glob("*.json")):
        shutil.copyfile(schema, schemas / schema.name)
    listed.append(("event-schema/", "contracts/schemas/*.json", "event schemas (JSON Schema)"))
    (out / "state-diagram.md").write_text(_state_diagram(checkout), encoding="utf-8")
    listed.append(("state-diagram.md", "docs/architecture.md", "event states"))
    shutil.copyfile(policy_file, out / "authority-matrix.json")
    listed.append(("authority-matrix.json", f"policies/versions/{policy_file.name}",
                   "who may approve what (the policy release)"))
    for name, source, what in _COPIES:
        origin = catalogue_file() if source == "docs/fixtures.md" else checkout / source
        if origin.exists():
            shutil.copyfile(origin, out / name)
            listed.append((name, source, what))
        else:
            listed.append(("(missing)", source, what))
    listed.append(("(not copied)", "deploy/grafana/tollgate.json",
                   "the on-call Grafana dashboard (docs/metrics.md), at the commit above"))
    evidence = {
        "certified": run.ok, "commit": commit, "policy_version": policy_version,
        "package_version": package_version(),
        "catalogue_digest": catalogue_digest(run.node_ids), "catalogue": run.node_ids,
        "tests_passed": run.passed, "tests_failed": run.failed, "pytest_exit": run.exit_code,
        "at": datetime.now(UTC).isoformat(), "results": run.results,
    }
    (out / "evidence.json").write_text(json.dumps(evidence, indent=2), encoding="utf-8")
    lines = [
        "# Acceptance pack", "",
        f"- verdict: **{'PASSED' if run.ok else 'FAILED'}** ({run.passed} passed,"
        f" {run.failed} failed; `evidence.json`, `pytest.log`)",
        f"- commit: `{commit}`", f"- policy version: `{policy_version}`",
        f"- catalogue digest: `{evidence['catalogue_digest']}` ({len(run.node_ids)} node ids)",
        "", "| file | from | what |", "|---|---|---|",
        *(f"| `{name}` | `{source}` | {what} |" for name, source, what in listed),
    ]
    (out / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return evidence

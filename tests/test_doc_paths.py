"""Every file or folder of this repository that a doc names exists: a move (issue 24's
reshaping) cannot leave a doc pointing at the old place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*ROOT.glob("docs/**/*.md"), ROOT / "README.md", ROOT / "deploy" / "README.md"])
#: Only names that start at one of these are taken for repository paths; the rest (the state
#: folder's `.tollgate/...`, URLs, placeholders) are not files of the checkout.
TOP = ("activities", "adapters", "contracts", "deploy", "docs", "policies", "tests", "tollgate",
       "workflows")
#: Named on purpose as what does not exist (policy.md explains why the folder has another name).
NOT_FILES = {"policies/matrix/",
             # Written into the wheel at build time by deploy/build_hook.py (ADR 0029): a
             # checkout never has them.
             "tollgate/ops/_build.py", "tollgate/ops/fixtures.md"}
PATH = re.compile(r"`(?P<code>[^`\s]+)`|\((?P<link>[^)\s]+)\)")


def named_paths(doc: Path) -> list[str]:
    found = []
    for match in PATH.finditer(doc.read_text(encoding="utf-8")):
        token = (match["code"] or match["link"]).split("::")[0].split("#")[0].rstrip(".,:;")
        if re.search(r"[*{}<>$]", token) or "/" not in token:
            continue
        if token.split("/")[0] in TOP or token.startswith(("./", "../")):
            found.append(token)
    return found


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_a_doc_names_exists(doc: Path) -> None:
    missing = [p for p in named_paths(doc) if p not in NOT_FILES
               and not (ROOT / p).exists() and not (doc.parent / p).exists()]
    assert not missing, f"{doc.relative_to(ROOT)} names paths that do not exist: {missing}"

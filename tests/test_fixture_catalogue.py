"""docs/fixtures.md names a test for every fixture; a renamed or deleted test must not leave a
row that proves nothing."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def test_every_fixture_names_a_test_that_exists() -> None:
    rows = [line for line in (ROOT / "docs" / "fixtures.md").read_text().splitlines()
            if line.startswith("| ") and line[2:3].isdigit()]
    assert len(rows) >= 24
    for row in rows:
        found = NODE.search(row)
        assert found, f"no test named in: {row[:60]}"
        path, name = found.groups()
        source = (ROOT / path).read_text()
        assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{path}::{name} is gone"

"""What the tests of PostgreSQL roles share (tests/deploy/test_postgres_refusals.py,
test_runtime_role.py): a URL as another role, and a command's one line checked to hold no
password."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

from tests.cli.helpers import Said

PASSWORD = "pw-" + uuid.uuid4().hex[:8]  # the right one; never in any answer
WRONG = "wrong-" + uuid.uuid4().hex[:8]


def as_user(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return (f"{parts.scheme}://{user}:{password}@{parts.netloc.rpartition('@')[2]}"
            f"{parts.path}{query}")


def one_line(said: Said, *, json_lines: bool = False) -> list[str]:
    """The lines on stderr (a start's JSON log lines left out with ``json_lines``), once no
    traceback and no password shows."""
    assert said.clean(), said.text
    assert PASSWORD not in said.text and WRONG not in said.text, said.text
    return [line for line in said.err.splitlines()
            if line.strip() and not (json_lines and line.startswith("{"))]

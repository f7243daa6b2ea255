"""Operator and `items` commands given numbers and moments PostgreSQL cannot hold: a usage error
naming the argument (exit 2) before any connection. They reached asyncpg, whose DataError was
exit 9 ("unexpected DataError ... value out of int64 range", "date value out of range")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.edge_arguments_support import answer
from tollgate.runtime.exits import Exit

BIG = "9" * 20  # past bigint (2^63 - 1)


@pytest.fixture(autouse=True)
def _nowhere(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Servers that refuse every connection: past its arguments, a command exits 3 or 8."""
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("DATABASE_URL", "postgresql://tollgate@127.0.0.1:9/none")
    monkeypatch.setenv("TEMPORAL_ADDRESS", "127.0.0.1:9")
    monkeypatch.delenv("TOLLGATE_TOKEN", raising=False)
    monkeypatch.delenv("TOLLGATE_DEBUG", raising=False)


@pytest.mark.parametrize(("line", "value", "name"), [
    ("ops dlq show {}", BIG, "ID"),
    ("ops dlq approve {} --reason r", BIG, "ID"),
    ("ops dlq replay {}", BIG, "ID"),
    ("ops dlq close {} --reason r", BIG, "ID"),
    ("ops outbox show {}", BIG, "ID"),
    ("ops outbox retry {}", BIG, "ID"),
    ("ops incident show {}", BIG, "ID"),
    ("items retry {}", BIG, "ITEM_ID"),
    ("items untag {} t --tenant acme --user u", BIG, "ITEM_ID"),
    ("ops reopen --root-cause rc --fixture f --canary {}", "2147483648", "--canary"),
    ("ops rollout --tenant acme --to canary --reason r --canary {}", "2147483648", "--canary"),
    ("ops incident --since {} --until 0001-01-02T00:00:00", "0001-01-01T00:00:00+14:00",
     "--since"),
    ("ops incident --since 9999-12-31T00:00:00-14:00 --until {}", "9999-12-31T23:59:59-14:00",
     "--until"),
])
def test_a_number_or_moment_postgresql_cannot_hold_is_exit_2(
        line: str, value: str, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = answer(line, value, capsys)
    assert code == Exit.USAGE, text
    assert len(text.strip().splitlines()) == 1 or "Usage:" in text, text
    assert name in text and "Traceback" not in text and "cannot reach" not in text

"""Issue 31's papercuts that need no stack: ``make demo`` takes the Web UI port from
``TOLLGATE_UI_PORT`` as ``tollgate dev`` does; the CRM stand-in's demo customers are fresh for a
policy whose freshness is one day."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

import tollgate.dev.demo
from tollgate.cli.dev import demo
from tollgate.dev.standins import CrmStandIn

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(("variable", "port"), [({"TOLLGATE_UI_PORT": "18233"}, 18233), ({}, 8233)])
def test_make_demo_puts_the_web_ui_on_the_port_the_variable_names(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: dict[str, str], port: int,
) -> None:
    asked: list[int] = []

    async def fake_demo(state_dir: Path, *, ui_port: int = 8233) -> list[str]:
        asked.append(ui_port)
        return []

    monkeypatch.delenv("TOLLGATE_UI_PORT", raising=False)
    monkeypatch.setattr(tollgate.dev.demo, "run_demo", fake_demo)
    done = CliRunner().invoke(demo, ["--state-dir", str(tmp_path / "demo")], env=variable)
    assert done.exit_code == 0, done.output
    assert asked == [port]


def test_demo_customers_are_still_fresh_for_a_day_long_policy_after_the_stack_started(
    tmp_path: Path,
) -> None:
    crm = CrmStandIn(path=tmp_path / "crm")
    records = crm.seed_demo(NOW)
    crm.close_store()
    # The first event reaches the gate minutes after the seed; the policies allow one day.
    at_gate = NOW + timedelta(minutes=10)
    assert records and all(at_gate - r.updated_at <= timedelta(days=1) for r in records)

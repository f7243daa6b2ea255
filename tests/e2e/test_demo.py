"""The demo scenario on the real Temporal dev server, embedded PostgreSQL and stand-ins."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tollgate.dev.demo import run_demo
from tollgate.dev.stack import free_port

pytestmark = pytest.mark.e2e


async def test_demo_scenario_outcomes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo injects one 504-after-write on the approved send.
    Evidence that it fired and was reconciled by lookup: the approved event ends SUCCEEDED
    with reason found_at_target (only a lookup after an unknown write gives that reason) and a
    SUCCEEDED receipt carrying the target's message id.
    Invariant: one workflow for two deliveries, the three final states, one message."""
    problems = await run_demo(tmp_path / "state", ui_port=free_port())
    out = capsys.readouterr().out
    assert problems == []
    assert out.count("duplicate event/acme/care-C-1001") == 1
    assert re.search(r"event/acme/care-C-1001-\d+\s+SUCCEEDED\s+found_at_target\s+"
                     r"SUCCEEDED msg_\w+", out), out
    assert "STOPPED        no_consent" in out
    assert "DEAD_LETTERED  schema_drift" in out
    assert "messages at the target: 1" in out
    # The other two seeds: one exact and one trigram merge plus one new tag, the removed tag
    # gone for good; the order delivered to two consumers and dead-lettered for the down one.
    assert "similar  JavaScript" in out and "new      Figma" in out
    assert "after removing Figma and a repeated write: JavaScript, UI design" in out
    assert "analytics     dead_lettered" in out and "inventory     delivered" in out

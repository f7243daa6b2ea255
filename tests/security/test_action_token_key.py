"""The key that signs action tokens: the dev stack makes it once, owner-only; a worker finds it
there or in TOLLGATE_ACTION_TOKEN_KEY, and does not start without one (ADR 0027)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tollgate.config.base import ConfigError
from tollgate.config.settings import Settings
from tollgate.dev.dev_keys import ensure_action_token_key
from tollgate.runtime.token_key import action_token_key


def test_the_dev_stack_makes_the_key_once_and_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        path = ensure_action_token_key(tmp_path / "state")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = path.read_text()
    assert len(first.strip()) == 64
    ensure_action_token_key(tmp_path / "state")
    assert path.read_text() == first  # a restart keeps it: tokens in flight stay valid


def test_a_worker_reads_the_variable_before_the_dev_stacks_file(tmp_path: Path) -> None:
    path = ensure_action_token_key(tmp_path)
    from_file = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path)})
    assert action_token_key(from_file) == path.read_text().strip().encode()
    given = "v" * 40
    from_env = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path),
                                  "TOLLGATE_ACTION_TOKEN_KEY": given})
    assert action_token_key(from_env) == given.encode()


def test_without_a_key_the_worker_stops_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stopped:
        action_token_key(Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path)}))
    assert "TOLLGATE_ACTION_TOKEN_KEY" in str(stopped.value)
    assert "\n" not in str(stopped.value)


def test_a_short_key_is_refused_without_echoing_it() -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"TOLLGATE_ACTION_TOKEN_KEY": "short-secret-value"})
    assert "TOLLGATE_ACTION_TOKEN_KEY" in str(refused.value)
    assert "short-secret-value" not in str(refused.value)

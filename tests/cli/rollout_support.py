"""For the rollout command tests: the canary's rollout and the settings they run with."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import TEST_KEYS_FILE
from tollgate.config.settings import Settings

CANARY = ["rollout", "--tenant", "acme", "--adapter", "messaging", "--to", "canary",
          "--canary", "5", "--reason", "week two"]


def settings(database_url: str, tmp_path: Path) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)})

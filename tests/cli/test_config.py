"""One settings object: explicit mappings only, the running stack's endpoints as fallback, the
database URL never shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts.events import MAX_EVENT_CHARS
from tollgate.config.settings import Settings
from tollgate.intake.submit import intake_request, workflow_id_for


def test_database_url_is_secret_and_os_environ_stays_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOLLGATE_TASK_QUEUE", "from-os-environ")
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path),
                                  "DATABASE_URL": "postgresql://u:hunter2@db/x"})
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings)
    assert settings.dsn == "postgresql://u:hunter2@db/x"
    assert settings.task_queue == "tollgate"
    assert settings.tenants_file == tmp_path / "tenants.json"


def test_a_running_stack_fills_what_the_environment_leaves_unset(tmp_path: Path) -> None:
    (tmp_path / "endpoints.json").write_text(json.dumps({
        "temporal_address": "127.0.0.1:17233", "database_url": "postgresql://stack/db",
        "crm_url": "http://127.0.0.1:1"}))
    settings = Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path),
                                  "TEMPORAL_ADDRESS": "10.0.0.1:7233"})
    assert settings.temporal_address == "10.0.0.1:7233"
    assert settings.dsn == "postgresql://stack/db"
    assert settings.crm_url == "http://127.0.0.1:1"


def test_an_oversized_event_travels_as_its_length_only() -> None:
    raw = json.dumps({"tenant_id": "acme", "idempotency_key": "k1",
                      "payload": {"notes": "x" * MAX_EVENT_CHARS}})
    request = intake_request(raw)
    assert (request.raw, request.oversize) == ("", len(raw))
    assert workflow_id_for(raw).startswith("quarantine/")  # never admitted under its key
    assert intake_request('{"a": 1}').oversize is None

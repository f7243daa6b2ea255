"""The settings tree: one line naming a refused variable, secrets masked by `config show`, and
docs/config.md kept in step with the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import base_env, tollgate
from tollgate.config import docs
from tollgate.config.base import ConfigError
from tollgate.config.settings import Settings
from tollgate.config.tree import variables
from tollgate.runtime.exits import Exit


@pytest.mark.parametrize(("variable", "value", "says"), [
    ("TOLLGATE_TARGETS", '["messaging"]', "TOLLGATE_TARGETS must be a JSON object"),
    ("TOLLGATE_TARGETS", "{not json", "TOLLGATE_TARGETS is not valid JSON"),
    ("TOLLGATE_TARGET_RATES", "messaging=fast", "TOLLGATE_TARGET_RATES: 'messaging=fast'"),
    ("TOLLGATE_HTTP_PORT", "80a", "TOLLGATE_HTTP_PORT='80a' is not a port number"),
    ("TOLLGATE_DRAFT_TIMEOUT", "soon", "TOLLGATE_DRAFT_TIMEOUT must be seconds"),
    ("TOLLGATE_INTAKE_RATE", "-1", "TOLLGATE_INTAKE_RATE must be above 0"),
    ("TOLLGATE_TARGET_CONNECTIONS", "0", "TOLLGATE_TARGET_CONNECTIONS must be a whole number"),
    ("TOLLGATE_TARGET_CONNECTIONS", "ten", "TOLLGATE_TARGET_CONNECTIONS must be a whole number"),
    ("TOLLGATE_TARGET_CONNECTIONS", "1001",
     "TOLLGATE_TARGET_CONNECTIONS must be a whole number from 1 to 1000, not '1001'"),
    ("TOLLGATE_REDIS_MAX_DELIVERIES", "0",
     "TOLLGATE_REDIS_MAX_DELIVERIES must be a whole number of at least 1, not '0'"),
])
def test_a_bad_value_is_one_line_naming_the_variable(
    tmp_path: Path, variable: str, value: str, says: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path), variable: value})
    assert caught.value.message.startswith(says) and "\n" not in caught.value.message


def test_a_refused_secret_is_never_echoed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path),
                           "TOLLGATE_DRAFT_PROVIDER": "sk-live-1234"})
    assert "TOLLGATE_DRAFT_PROVIDER" in caught.value.message
    assert "sk-live-1234" not in caught.value.message


def test_the_cli_turns_a_bad_value_into_its_config_exit_code(tmp_path: Path) -> None:
    said = tollgate("config", "show", env=base_env(tmp_path, TOLLGATE_TARGETS="[1]"))
    assert said.code == Exit.CONFIG, said.text
    assert said.err.strip() == ("tollgate: TOLLGATE_TARGETS must be a JSON object keyed by "
                                "target name")


def test_config_show_masks_the_database_password_and_says_where_values_came_from(
    tmp_path: Path
) -> None:
    (tmp_path / "endpoints.json").write_text(json.dumps({"crm_url": "http://127.0.0.1:18301"}))
    env = base_env(tmp_path, DATABASE_URL="postgresql://tollgate:hunter2@db:5432/tollgate",
                   TOLLGATE_TARGET_RATES="messaging=5")
    table = tollgate("config", "show", env=env)
    shown = tollgate("config", "show", "--json", env=env)

    assert table.code == shown.code == Exit.OK, table.text + shown.text
    assert "hunter2" not in table.text and "hunter2" not in shown.text
    rows = {row["variable"]: row for rows in json.loads(shown.out).values() for row in rows}
    assert rows["DATABASE_URL"] == {"variable": "DATABASE_URL", "value": "********",
                                    "source": "env"}
    assert rows["TOLLGATE_CRM_URL"]["source"] == "running stack"
    assert rows["TOLLGATE_TARGET_RATES"]["value"] == "messaging=5.0"
    assert rows["TOLLGATE_HTTP_PORT"] == {"variable": "TOLLGATE_HTTP_PORT", "value": "8400",
                                          "source": "default"}
    assert "[database]" in table.out and "[targets]" in table.out


def test_every_variable_is_documented_once() -> None:
    names = [v.name for v in variables()]
    assert len(names) == len(set(names))
    assert all(v.description for v in variables()), [v.name for v in variables()
                                                     if not v.description]


def test_docs_config_md_is_not_stale() -> None:
    assert docs.DOC.read_text() == docs.render(), (
        "docs/config.md is stale: run python -m tollgate.config.docs --write")

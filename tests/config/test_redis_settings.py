"""The Redis intake's settings: defaults a stream consumer can start with, and a refused value
said in one line naming its variable (never echoing the URL, which may carry a password)."""

from __future__ import annotations

import pytest

from tollgate.config.base import ConfigError
from tollgate.config.settings import Settings
from tollgate.intake.redis_stream import intake_for


def test_defaults_name_the_stream_group_and_dead_letter_stream() -> None:
    intake = intake_for(Settings.from_env({"TOLLGATE_REDIS_URL": "redis://:pw@h:6379/0"}))
    assert (intake.stream, intake.group, intake.dead_stream) == (
        "tollgate.events", "tollgate", "tollgate.events.dead")
    assert intake.limits.max_deliveries == 5 and intake.limits.claim_idle_s == 60


@pytest.mark.parametrize(("variable", "value"), [
    ("TOLLGATE_REDIS_STREAM", "events\nx"), ("TOLLGATE_REDIS_GROUP", "a b"),
    ("TOLLGATE_REDIS_MAX_DELIVERIES", "0"), ("TOLLGATE_REDIS_CLAIM_IDLE_S", "-1"),
])
def test_a_refused_value_is_one_line_naming_its_variable(variable: str, value: str) -> None:
    with pytest.raises(ConfigError) as refused:
        Settings.from_env({"TOLLGATE_REDIS_URL": "redis://:hunter2@h/0", variable: value})
    assert variable in refused.value.message and "\n" not in refused.value.message
    assert "hunter2" not in refused.value.message


def test_no_url_is_one_line() -> None:
    with pytest.raises(SystemExit, match="TOLLGATE_REDIS_URL is not set"):
        intake_for(Settings.from_env({}))


def test_the_intake_timeout_must_end_before_the_entry_turns_claimable() -> None:
    with pytest.raises(ConfigError, match="TOLLGATE_REDIS_HANDLER_TIMEOUT_S must be below"):
        Settings.from_env({"TOLLGATE_REDIS_CLAIM_IDLE_S": "20",
                           "TOLLGATE_REDIS_HANDLER_TIMEOUT_S": "30"})

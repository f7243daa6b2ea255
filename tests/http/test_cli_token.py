"""The CLI's review commands with a token: the token's identity wins over what flags claim, and
a token that proves nothing ends the command in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tollgate.cli import main
from tollgate.cli.common import identity_of
from tollgate.config.settings import Settings
from tollgate.runtime.identity import issue_dev_token


def settings(state: Path) -> Settings:
    return Settings.from_env({"TOLLGATE_STATE_DIR": str(state)})


async def test_the_token_names_the_reviewer_role_and_tenant(tmp_path: Path) -> None:
    token = issue_dev_token(tmp_path, reviewer="lan.nguyen", role="care_lead", tenant="acme")
    who = await identity_of(token, settings(tmp_path))
    assert (who.reviewer, who.roles, who.tenant) == ("lan.nguyen", ("care_lead",), "acme")


def test_a_forged_token_ends_the_command_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = issue_dev_token(tmp_path / "other", reviewer="mallory", role="care_lead",
                             tenant="acme")
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        main(["review", "approve", "event/acme/k-1", "--seen", "v1:req-1", "--reason", "ok",
              "--token", forged])
    err = capsys.readouterr().err.strip()
    assert stopped.value.code == 8
    assert err.startswith("tollgate: token refused: bad_token")
    assert "\n" not in err and forged not in err


def test_a_decision_needs_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("TOLLGATE_TOKEN", raising=False)
    with pytest.raises(SystemExit) as stopped:
        main(["review", "approve", "event/acme/k-1", "--seen", "v1:req-1", "--reason", "ok"])
    assert stopped.value.code == 8
    assert "--token" in capsys.readouterr().err

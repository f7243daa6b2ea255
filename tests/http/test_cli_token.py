"""The CLI's review commands with a token: the token's identity wins over what flags claim."""

from __future__ import annotations

from pathlib import Path

import pytest

from tollgate.cli import build_parser
from tollgate.config import Settings
from tollgate.http.identity import apply_token, issue_dev_token


def settings(state: Path) -> Settings:
    return Settings.from_env({"TOLLGATE_STATE_DIR": str(state)})


async def test_token_replaces_claimed_reviewer_role_and_tenant(tmp_path: Path) -> None:
    token = issue_dev_token(tmp_path, reviewer="lan.nguyen", role="care_lead", tenant="acme")
    args = build_parser().parse_args([
        "review", "approve", "event/acme/k-1", "--reason", "ok", "--reviewer", "mallory",
        "--role", "admin", "--tenant", "globex", "--token", token])
    await apply_token(args, settings(tmp_path))
    assert (args.reviewer, args.role, args.tenant) == ("lan.nguyen", "care_lead", "acme")


async def test_forged_token_ends_the_command_in_one_line(tmp_path: Path) -> None:
    other = tmp_path / "other"
    token = issue_dev_token(other, reviewer="lan.nguyen", role="care_lead", tenant="acme")
    args = build_parser().parse_args(["review", "list", "--token", token])
    with pytest.raises(SystemExit) as stopped:
        await apply_token(args, settings(tmp_path))  # verified against another dev key
    assert str(stopped.value).startswith("token refused: bad_token")
    assert "\n" not in str(stopped.value)

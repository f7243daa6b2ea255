"""A review decision from the CLI needs a verified token of a person: without one, or with a
service account's, the command ends in one line and nothing reaches Temporal."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tollgate.cli import main
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit
from tollgate.runtime.identity import issue_dev_token

#: The decisions' module and the queue's: each command looks up ``connect`` in its own.
review_cli = importlib.import_module("tollgate.cli.review_decide")
review_queue = importlib.import_module("tollgate.cli.review_list")
DECIDE = ["review", "approve", "event/acme/k-1", "--seen", "v1:req-1", "--reason", "ok"]


@pytest.fixture
def no_temporal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The state folder of this test; reaching Temporal fails the test."""

    async def connect(_: Settings) -> None:
        raise AssertionError("the decision reached Temporal")

    monkeypatch.setattr(review_cli, "connect", connect)
    monkeypatch.setattr(review_queue, "connect", connect)
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    monkeypatch.delenv("TOLLGATE_TOKEN", raising=False)
    return tmp_path


def said(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    out = capsys.readouterr()
    return int(stopped.value.code or 0), (out.err + out.out).strip()


def test_a_decision_without_a_token_exits_8_in_one_line(
    no_temporal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, line = said(DECIDE, capsys)
    assert code == Exit.NO_IDENTITY == 8
    assert line.startswith("tollgate: no token:") and "\n" not in line


def test_claiming_a_reviewer_by_flag_is_no_longer_possible(
    no_temporal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = said([*DECIDE, "--reviewer", "lan.nguyen", "--role", "care_lead",
                    "--tenant", "acme"], capsys)
    assert code == Exit.USAGE


def test_a_service_accounts_token_cannot_decide(
    no_temporal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = issue_dev_token(no_temporal, reviewer="crm-sync", role="care_lead", tenant="acme",
                          extra={"client_id": "crm-sync"})
    code, line = said([*DECIDE, "--token", bot], capsys)
    assert code == Exit.REFUSED
    assert line == ("tollgate: refused: service_account: a service or shared account cannot "
                    "decide a review")
    assert bot not in line


def test_a_role_the_token_does_not_hold_is_refused(
    no_temporal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lan = issue_dev_token(no_temporal, reviewer="lan.nguyen", role="reviewer", tenant="acme")
    code, line = said([*DECIDE, "--token", lan, "--role", "care_lead"], capsys)
    assert code == Exit.REFUSED and "role_not_in_token" in line


def test_a_forged_token_exits_8(no_temporal: Path, capsys: pytest.CaptureFixture[str]) -> None:
    forged = issue_dev_token(no_temporal / "elsewhere", reviewer="lan.nguyen", role="care_lead",
                             tenant="acme")
    code, line = said([*DECIDE, "--token", forged], capsys)
    assert code == Exit.NO_IDENTITY and line.startswith("tollgate: token refused: bad_token")
    assert forged not in line


@pytest.mark.parametrize("token", ["\udcff", "eyJhbGciOiJSUzI1NiJ9.\udcc3\udca9.sig"])
def test_a_token_with_bytes_that_are_not_utf8_is_refused_with_exit_8(
    no_temporal: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    token: str
) -> None:
    # An argument's bytes that are not UTF-8 reach Python as lone surrogates; with an identity
    # provider configured the token's key id was read first, and that was exit 9
    # ("unexpected UnicodeEncodeError"), not the token refused.
    monkeypatch.setenv("TOLLGATE_OIDC_ISSUER", "https://idp.invalid")
    monkeypatch.setenv("TOLLGATE_OIDC_AUDIENCE", "tollgate")
    code, line = said([*DECIDE, "--token", token], capsys)
    assert code == Exit.NO_IDENTITY, line
    assert line.startswith("tollgate: token refused: bad_token") and "\n" not in line


def test_listing_another_tenant_than_the_tokens_is_refused_not_swapped(
    no_temporal: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`review list --token <globex's> --tenant acme` listed globex's queue and said "nothing
    waiting for review for globex": an operator asking about acme read that as acme's answer."""
    globex = issue_dev_token(no_temporal, reviewer="lan.nguyen", role="care_lead",
                             tenant="globex")
    code, line = said(["review", "list", "--token", globex, "--tenant", "acme"], capsys)
    assert code == Exit.REFUSED, line
    assert line == ("tollgate: --tenant acme: the token is globex's and lists globex's reviews "
                    "only (drop --tenant, or use a token of acme)"), line


def test_a_token_lists_its_own_tenant_with_or_without_naming_it(
    no_temporal: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str | None] = []

    async def connect(_: Settings) -> None:
        return None

    async def review_list(_client: None, _s: Settings, *, tenant: str | None,
                          as_json: bool) -> int:
        asked.append(tenant)
        return Exit.OK

    monkeypatch.setattr(review_queue, "connect", connect)
    monkeypatch.setattr(review_queue, "review_list", review_list)
    own = issue_dev_token(no_temporal, reviewer="lan.nguyen", role="care_lead", tenant="acme")
    for argv in (["--token", own], ["--token", own, "--tenant", "acme"], ["--tenant", "globex"]):
        code, line = said(["review", "list", *argv], capsys)
        assert code == Exit.OK, line
    assert asked == ["acme", "acme", "globex"]

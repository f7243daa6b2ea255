"""`tollgate ops contacts` (issue 28 item 3, ADR 0039): a change owner of the tenant lists,
adds and removes its own contact points; anyone else is refused and audited; bad arguments end
in one line naming the option. Only PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.contacts import ContactStore
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tollgate.cli import main
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

ADD = ["contacts", "add", "--tenant", "acme", "--reason", "published hotline"]


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"})


async def test_a_change_owner_adds_lists_and_removes_the_hotline(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await run_ops([*ADD, "--phone", "+84 28 3822 1234"], s, role="change_owner",
                         name="lee") == Exit.OK
    assert "added" in capsys.readouterr().out
    # The same line written the national way is already listed: nothing changes.
    assert await run_ops([*ADD, "--phone", "028 3822 1234"], s, role="change_owner",
                         name="lee") == Exit.OK
    assert "already lists this phone as +84 28 3822 1234" in capsys.readouterr().out
    assert [c.value for c in await ContactStore(pool).tenant_contacts("acme")] == [
        "+84 28 3822 1234"]

    assert await run_ops(["contacts", "list", "--tenant", "acme", "--json"], s) == Exit.OK
    (row,) = json.loads(capsys.readouterr().out)
    assert (row["kind"], row["value"], row["added_by"], row["reason"]) == (
        "phone", "+84 28 3822 1234", "lee", "published hotline")

    remove = ["contacts", "remove", "--tenant", "acme", "--phone", "(028) 3822-1234",
              "--reason", "line closed"]
    assert await run_ops(remove, s, role="change_owner", name="lee") == Exit.OK
    assert await ContactStore(pool).tenant_contacts("acme") == []
    assert await run_ops(remove, s, role="change_owner", name="lee") == Exit.NOT_FOUND
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "tollgate: acme lists no phone (028) 3822-1234")


async def test_anyone_else_is_refused_audited_and_changes_nothing(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    email = [*ADD[:-2], "--reason", "front desk", "--email", "desk@globex.vn"]
    email[3] = "globex"
    assert await run_ops(email, s, role="on_call", tenant="globex", name="kim") == Exit.REFUSED
    assert await run_ops(email, s, role="change_owner", tenant="acme",
                         name="lee") == Exit.REFUSED
    assert await run_ops(email, s) == Exit.NO_IDENTITY
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("tollgate: refused: role_not_allowed: contacts_change needs")
    assert err[1].startswith("tollgate: refused: cross_tenant: ")
    assert err[2].startswith("tollgate: no token:")
    assert await ContactStore(pool).tenant_contacts("globex") == []
    rows = await pool.fetch("SELECT actor, action, detail FROM audit WHERE target ="
                            " 'contacts/globex' ORDER BY id")
    assert [(r["actor"], r["action"], json.loads(r["detail"])["refusal_code"]) for r in rows] == [
        ("kim", "refused:contacts_change", "role_not_allowed"),
        ("lee", "refused:contacts_change", "cross_tenant")]


async def test_a_removal_by_anyone_else_is_refused_and_the_point_stays(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await run_ops([*ADD, "--phone", "+84 28 3822 1234"], s, role="change_owner",
                         name="lee") == Exit.OK
    remove = ["contacts", "remove", "--tenant", "acme", "--phone", "+84 28 3822 1234",
              "--reason", "line closed"]
    assert await run_ops(remove, s, role="on_call", name="kim") == Exit.REFUSED
    assert await run_ops(remove, s, role="change_owner", tenant="globex",
                         name="lee") == Exit.REFUSED
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("tollgate: refused: role_not_allowed: contacts_change needs")
    assert err[1].startswith("tollgate: refused: cross_tenant: ")
    assert [c.value for c in await ContactStore(pool).tenant_contacts("acme")] == [
        "+84 28 3822 1234"]


@pytest.mark.parametrize(("argv", "named"), [
    (["--phone", "call us"], "'--phone'"),
    (["--email", "desk at acme"], "'--email'"),
    (["--phone", "+84 28 3822 1234", "--email", "desk@acme.vn"], "exactly one of"),
    ([], "exactly one of"),
    (["--phone", "+84 28\x00 3822 1234"], "'--phone'"),
])
def test_bad_arguments_end_in_one_line_naming_the_option(
    argv: list[str], named: str, database_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        main(["ops", *ADD, *argv, "--token", "unused"])
    err = capsys.readouterr().err
    assert stopped.value.code == Exit.USAGE
    assert named in err and "Traceback" not in err


@pytest.mark.parametrize("tenant", ["ac\x00me", "*", "acme/globex"])
def test_a_tenant_that_is_not_one_tenant_id_is_refused_at_the_edge(
    tenant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        main(["ops", "contacts", "list", "--tenant", tenant])
    assert stopped.value.code == Exit.USAGE
    assert "'--tenant'" in capsys.readouterr().err

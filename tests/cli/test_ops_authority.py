"""Issue 27 item 3: the operator commands take their roles from the token. Someone without the
role cannot reopen a kill switch or approve a dead-letter replay; each refusal changes nothing
and leaves an audit row naming who tried. Only PostgreSQL (these commands work while Temporal is
down)."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.ops import OpsStore
from adapters.postgres.pool import create_pool
from tests.cli.helpers import ops_token, run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tests.stored_requests import stored_request
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

REOPEN = ["reopen", "--adapter", "messaging", "--tenant", "acme"]
RUNBOOK = ["--root-cause", "target answered 504 after writing", "--fixture",
           "fail_after_write"]


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    # Temporal is nowhere: a reopen's wake-up says so, the switch rows do not care.
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"})


@pytest.fixture
async def db(database_url: str) -> asyncpg.Pool:
    # Migrated: a test that seeds rows first must not depend on one before it having run a
    # command (which migrates).
    p = await create_pool(database_url, max_size=2)
    yield p
    await p.close()


async def refusals(db: asyncpg.Pool, target: str) -> list[tuple[str, str, str]]:
    rows = await db.fetch("SELECT actor, action, detail FROM audit WHERE target = $1 AND"
                          " action LIKE 'refused:%' ORDER BY id", target)
    return [(r["actor"], r["action"], json.loads(r["detail"])["refusal_code"]) for r in rows]


async def closed(db: asyncpg.Pool) -> bool:
    return bool(await db.fetchval("SELECT closed FROM kill_switches WHERE adapter = 'messaging'"
                                  " AND tenant_id = 'acme'"))


async def test_only_the_change_owner_reopens_and_only_by_the_runbook(
    s: Settings, db: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    kill = ["kill", "--adapter", "messaging", "--tenant", "acme", "--reason", "incident 42"]
    assert await run_ops(kill, s, role="change_owner", name="lee") == Exit.REFUSED
    assert await run_ops(kill, s, role="on_call", name="kim") == Exit.OK
    assert await closed(db)
    capsys.readouterr()

    # On call stopped it; on call may not reopen it, even with every runbook field.
    assert await run_ops([*REOPEN, *RUNBOOK, "--canary", "3"], s, role="on_call",
                         name="kim") == Exit.REFUSED
    assert "refused: role_not_allowed: " in capsys.readouterr().err
    # The change owner of another tenant, or without the fixture, or with no canary yet: no.
    assert await run_ops([*REOPEN, *RUNBOOK, "--canary", "3"], s, role="change_owner",
                         tenant="globex", name="lee") == Exit.REFUSED
    assert await run_ops([*REOPEN, "--root-cause", "a 504", "--canary", "3"], s,
                         role="change_owner", name="lee") == Exit.REFUSED
    assert await run_ops([*REOPEN, *RUNBOOK], s, role="change_owner", name="lee") == Exit.REFUSED
    assert "runbook's fields: canary" in capsys.readouterr().err.splitlines()[-1]
    assert await closed(db)
    assert await refusals(db, "messaging/acme") == [
        ("lee", "refused:kill_switch_close", "role_not_allowed"),
        ("kim", "refused:kill_switch_reopen", "role_not_allowed"),
        ("lee", "refused:kill_switch_reopen", "cross_tenant"),
        ("lee", "refused:kill_switch_reopen", "runbook_incomplete"),
        ("lee", "refused:kill_switch_reopen", "runbook_incomplete"),
    ]

    assert await run_ops([*REOPEN, *RUNBOOK, "--canary", "3"], s, role="change_owner",
                         name="lee") == Exit.OK
    row = await db.fetchrow("SELECT actor, detail FROM audit WHERE action = 'reopen_canary'")
    detail = json.loads(row["detail"])
    assert row["actor"] == "lee" and (detail["root_cause"], detail["fixture"], detail["canary"]) \
        == ("target answered 504 after writing", "fail_after_write", 3)
    # Confirmed before the canary passed: refused, saying what it waits for.
    capsys.readouterr()
    assert await run_ops([*REOPEN, *RUNBOOK], s, role="change_owner", name="lee") == Exit.REFUSED
    assert "this switch's canary has 3 action(s) left" in capsys.readouterr().err
    # The canary passes (its three actions go, the switch closes itself): now a plain reopen
    # confirms it.
    for _ in range(3):
        assert await OpsStore(db).pass_switch("messaging", "acme") is None
    assert await closed(db)
    assert await run_ops([*REOPEN, *RUNBOOK], s, role="change_owner", name="lee") == Exit.OK
    assert not await closed(db)


async def test_a_replay_approval_needs_the_role_and_is_audited_when_refused(
    s: Settings, db: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    await OpsStore(db).dead_letter(
        workflow_id="event/acme/authz-dl", error_class="unknown_write",
        error_code="unreconciled_write", state="STOPPED", owner="messaging-oncall",
        replay_plan="check by hand", redacted_payload=None, tenant_id="acme", event_id="e-1",
        correlation_id="c-1", action_key="acme:authz-dl:messaging:send",
        replay_input=stored_request("authz-dl", "acme:authz-dl:messaging:send"))
    dl_id = await db.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1",
                              "event/acme/authz-dl")
    approve = ["dlq", "approve", str(dl_id), "--reason", "customer got nothing"]

    assert await run_ops(approve, s) == Exit.NO_IDENTITY  # no token: nobody to name
    assert await run_ops(approve, s, role="on_call", name="kim") == Exit.REFUSED
    assert "refused: role_not_allowed: " in capsys.readouterr().err
    assert await run_ops(approve, s, role="change_owner", tenant="globex",
                         name="lee") == Exit.REFUSED
    row = await db.fetchrow("SELECT status, approvals, approved_by FROM dead_letters"
                            " WHERE id = $1", dl_id)
    assert (row["status"], row["approvals"], row["approved_by"]) == ("OPEN", 0, None)
    # A reviewer's token is no operator's: no replay either.
    assert await run_ops(["dlq", "replay", str(dl_id)], s, role="care_lead",
                         name="lan") == Exit.REFUSED
    assert await refusals(db, f"dead_letter/{dl_id}") == [
        ("kim", "refused:dead_letter_approve", "role_not_allowed"),
        ("lee", "refused:dead_letter_approve", "cross_tenant"),
        ("lan", "refused:dead_letter_replay", "role_not_allowed"),
    ]

    assert await run_ops(approve, s, role="incident_commander", name="mai") == Exit.OK
    row = await db.fetchrow("SELECT approvals, approved_by FROM dead_letters WHERE id = $1",
                            dl_id)
    assert (row["approvals"], row["approved_by"]) == (1, "mai")


#: A row id no dead letter has: PostgreSQL's bigserial never gets this far in a test database.
NO_SUCH_DEAD_LETTER = 9_000_000_000_000_000_000


@pytest.mark.parametrize(("verb", "role"), [
    (["approve", "--reason", "customer got nothing"], "change_owner"),
    (["replay"], "on_call"),
])
async def test_a_token_cannot_tell_another_tenants_dead_letter_from_none(
    verb: list[str], role: str, s: Settings, db: asyncpg.Pool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Approve and replay check the token against the dead letter's tenant before anything of
    it is said, as close does: an id with no dead letter is every tenant's. Before, they read
    the row first and said `no dead letter N` (exit 4) to any token or none, so another
    tenant's token learned which ids exist, and the refusal of an existing one named its
    tenant."""
    workflow_id = f"event/acme/unseen-{verb[0]}"
    await OpsStore(db).dead_letter(
        workflow_id=workflow_id, error_class="unknown_write", error_code="unreconciled_write",
        state="STOPPED", owner="messaging-oncall", replay_plan="check by hand",
        redacted_payload=None, tenant_id="acme", event_id="e-2", correlation_id="c-2",
        action_key=f"acme:unseen-{verb[0]}:messaging:send",
        replay_input=stored_request(f"unseen-{verb[0]}",
                                    f"acme:unseen-{verb[0]}:messaging:send"))
    dl_id = await db.fetchval("SELECT id FROM dead_letters WHERE workflow_id = $1",
                              workflow_id)

    async def answer(row_id: int, **token: str) -> tuple[int, str]:
        code = await run_ops(["dlq", verb[0], str(row_id), *verb[1:]], s, **token)
        return code, capsys.readouterr().err.splitlines()[-1]

    said = []
    for token in [{}, {"role": role, "tenant": "globex", "name": "lee"},
                  {"role": "care_lead", "tenant": "globex", "name": "lan"}]:
        there = await answer(dl_id, **token)
        assert await answer(NO_SUCH_DEAD_LETTER, **token) == there
        said.append(there)
    assert [code for code, _ in said] == [Exit.NO_IDENTITY, Exit.REFUSED, Exit.REFUSED]
    assert said[1][1] == (f"tollgate: refused: cross_tenant: the token may dead_letter_{verb[0]}"
                          " for its own tenant ('globex') only; that id is none of its own (another"
                          " tenant's, or none at all)")
    assert said[2][1].startswith("tollgate: refused: role_not_allowed: ")
    for target in (f"dead_letter/{dl_id}", f"dead_letter/{NO_SUCH_DEAD_LETTER}"):
        assert (await refusals(db, target))[-2:] == [
            ("lee", f"refused:dead_letter_{verb[0]}", "cross_tenant"),
            ("lan", f"refused:dead_letter_{verb[0]}", "role_not_allowed")]
    row = await db.fetchrow("SELECT status, approvals, replays FROM dead_letters WHERE id = $1",
                            dl_id)
    assert (row["status"], row["approvals"], row["replays"]) == ("OPEN", 0, 0)


@pytest.mark.parametrize("line", [
    "ops close event/acme/k-1 --operator lan.ops --reason r",
    "ops close event/acme/k-1 --reason r --unresolved-write --operator lan.ops",
    "ops outbox retry 1 --operator lan.ops --reason r",
    "ops outbox drop 1 --operator lan.ops",
    # These never took it and answered Click's bare "No such option: --operator".
    "ops kill --tenant acme --reason r --operator lan.ops",
    "ops reopen --tenant acme --operator lan.ops",
    "ops dlq approve 1 --reason r --operator lan.ops",
    "ops dlq replay 1 --operator lan.ops",
    "ops dlq close 1 --reason r --operator lan.ops",
    "ops rollout --tenant acme --to shadow --reason r --operator lan.ops",
    "ops contacts add --tenant acme --domain example.com --reason r --operator lan.ops",
    "ops incident review 1 --operator lan.ops",
    "ops kill --operator",  # no name at all: not "requires an argument"
])
def test_operator_is_gone_and_the_answer_says_the_token_names_you(
    line: str, s: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    """Operators used to `--operator` (ops close and outbox retry/drop recorded it) type it
    anywhere: exit 2 in one line saying where the name comes from, before any connection, the
    claimed name not repeated; never an action under it."""
    from tollgate.cli import main

    monkeypatch.setenv("DATABASE_URL", "postgresql://tollgate@127.0.0.1:9/none")
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(s.state_dir))
    monkeypatch.setenv("TOLLGATE_TOKEN", ops_token(s, "on_call")[1])
    with pytest.raises(SystemExit) as ended:
        main(line.split())
    said = capsys.readouterr()
    text = said.out + said.err
    assert ended.value.code == Exit.USAGE, text
    assert len(text.strip().splitlines()) == 1, text
    assert "--operator is gone: the name recorded is the token's (--token" in text, text
    assert "lan.ops" not in text


def test_every_operator_command_answers_operator_with_the_one_shared_option() -> None:
    """Each ops command that takes a token (the roles come from it) has the same hidden
    --operator: a new one cannot answer Click's "No such option" or a copy of the line."""
    import click

    from tollgate.cli import cli
    from tollgate.cli.ops_authority import operator_gone

    def walk(group: click.Group, path: str) -> list[tuple[str, click.Command]]:
        # Asked by name: a lazy group (ADR 0073) holds in .commands only what was loaded
        # already, so this test passed or failed by which tests ran before it in its process.
        found: list[tuple[str, click.Command]] = []
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            assert command is not None, name
            here = f"{path} {name}"
            found += walk(command, here) if isinstance(command, click.Group) else [(here, command)]
        return found

    ops = cli.get_command(click.Context(cli), "ops")  # imported when asked for
    assert isinstance(ops, click.Group)
    with_token = [(path, command) for path, command in walk(ops, "ops")
                  if any(p.name == "token" for p in command.params)]
    assert {"ops kill", "ops close", "ops dlq approve", "ops contacts remove",
            "ops incident review"} <= {path for path, _ in with_token}
    for path, command in with_token:
        gone = [p for p in command.params if "--operator" in getattr(p, "opts", [])]
        assert [p.callback for p in gone] == [operator_gone], path


def test_docs_cli_md_gives_the_line_operator_hears(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli.helpers import ROOT
    from tollgate.cli import main

    with pytest.raises(SystemExit):
        main(["ops", "rollout", "--operator", "lan.ops"])
    said = capsys.readouterr().err.strip()
    line = said[said.index("--operator is gone"):said.index(" (`tollgate ops rollout --help`")]
    doc = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert f"`{line}`" in doc
    assert "given to any of them, with or without a name, it is exit 2" in doc

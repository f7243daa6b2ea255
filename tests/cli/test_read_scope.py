"""The operator read commands (`ops dlq list|show`, `ops outbox list|show`, `ops incident
show`, `trace`, `ops state`) scoped by the caller's token (ADR 0076): a token of one tenant lists
that tenant's rows only, and is refused another tenant's row and a row that does not exist in
one line, so it learns nothing of other tenants, not even which ids exist; any verified identity
reads its own tenant's (a reviewer's token here); without a token they answer as before (the
database URL is the authority). Before, none of them took `--token` at all."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.cli.helpers import ops_token, run_ops
from tests.cli.read_scope_support import rows_of, settings
from tests.cli.trace_support import run_trace
from tests.conftest import fresh_key
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

#: A row id no table here reaches (as tests/cli/test_ops_unseen_rows.py).
NO_SUCH_ROW = 9_000_000_000_000_000_000
#: The token of every read below: a reviewer of acme, no operator role at all.
READER = {"role": "care_lead", "tenant": "acme", "name": "rae"}
Run = Callable[..., Awaitable[tuple[int, str, str]]]


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    return settings(database_url, tmp_path)


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """A read command (``trace`` first: the top-level one, else under ``ops``) as a user of
    ``token`` (``READER``'s fields; none: no token): its code, output and last error line."""

    async def go(argv: list[str], s: Settings, **token: str) -> tuple[int, str, str]:
        capsys.readouterr()
        if argv[0] == "trace":
            code = await run_trace(s, *argv[1:], *(ops_token(s, **token) if token else []))
        else:
            code = await run_ops(argv, s, **token)
        said = capsys.readouterr()
        return code, said.out, (said.err.splitlines() or [""])[-1]

    return go


def refusal(what: str) -> str:
    return (f"tollgate: refused: cross_tenant: the token may {what} for its own tenant ('acme')"
            " only; that id is none of its own (another tenant's, or none at all)")


@pytest.mark.parametrize(("argv", "kind", "rows"), [
    (["dlq", "list", "--json"], "dlq", "dead letters"),
    (["outbox", "list", "--json"], "outbox", "outbox rows"),
], ids=["dlq-list", "outbox-list"])
async def test_a_list_keeps_to_the_tokens_tenant(
    argv: list[str], kind: str, rows: str, s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    acme, globex = [await rows_of(t, s, pool, run) for t in ("acme", "globex")]

    async def listed(*extra: str, **token: str) -> list[dict[str, object]]:
        code, out, err = await run([*argv, *extra], s, **token)
        assert code == Exit.OK, err
        return list(json.loads(out))

    mine = await listed(**READER)
    assert acme[kind] in {str(r["id"]) for r in mine}
    assert {r["tenant_id"] for r in mine} == {"acme"}
    assert await listed("--tenant", "acme", **READER) == mine
    # Without a token, as before: every tenant's, or the one --tenant names.
    every = {str(r["id"]) for r in await listed()}
    assert {acme[kind], globex[kind]} <= every
    assert {r["tenant_id"] for r in await listed("--tenant", "globex")} == {"globex"}
    # A --tenant naming another tenant is refused, never answered as the token's (review list).
    assert await run([*argv, "--tenant", "globex"], s, **READER) == (Exit.REFUSED, "", (
        f"tollgate: --tenant globex: the token is acme's and lists acme's {rows} only (drop"
        " --tenant, or use a token of globex)"))
    code, _, err = await run([*argv, "--token", "not-a-token"], s)
    assert code == Exit.NO_IDENTITY and "not-a-token" not in err


@pytest.mark.parametrize(("argv", "kind", "what"), [
    (["dlq", "show"], "dlq", "dead_letter_read"),
    (["outbox", "show"], "outbox", "outbox_read"),
    (["incident", "show"], "incident", "incident_read"),
    (["trace"], "event", "event_read"),
], ids=["dlq-show", "outbox-show", "incident-show", "trace"])
async def test_another_tenants_row_and_none_are_refused_alike(
    argv: list[str], kind: str, what: str, s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    acme, globex = [await rows_of(t, s, pool, run) for t in ("acme", "globex")]
    missing = f"event/globex/{fresh_key()}" if kind == "event" else str(NO_SUCH_ROW)

    code, out, _ = await run([*argv, acme[kind]], s, **READER)
    assert code == Exit.OK and out, out
    theirs = await run([*argv, globex[kind]], s, **READER)
    assert theirs == (Exit.REFUSED, "", refusal(what))
    assert await run([*argv, missing], s, **READER) == theirs
    prefix = {"dlq": "dead_letter/", "outbox": "outbox/", "incident": "incident/"}.get(kind, "")
    audited = await pool.fetch("SELECT actor, target FROM audit WHERE action = $1 AND target"
                               " = ANY($2::text[]) ORDER BY id", f"refused:{what}",
                               [prefix + globex[kind], prefix + missing])
    assert [(a["actor"], a["target"]) for a in audited] == [
        ("rae", prefix + globex[kind]), ("rae", prefix + missing)]
    # Without a token, as before: any tenant's row, and none is not found.
    code, out, _ = await run([*argv, globex[kind]], s)
    assert code == Exit.OK and out
    assert (await run([*argv, missing], s))[0] == Exit.NOT_FOUND
    code, _, err = await run([*argv, globex[kind], "--token", "not-a-token"], s)
    assert code == Exit.NO_IDENTITY and "not-a-token" not in err


async def test_a_token_given_before_the_incident_subcommand_is_the_subcommands(
    s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    # `ops incident --token T show ID` read as unscoped before: the group took the token and
    # the subcommand, which had none of its own, showed another tenant's draft.
    globex = await rows_of("globex", s, pool, run)
    before = ["incident", *ops_token(s, **READER), "show"]
    assert await run([*before, globex["incident"]], s) == (
        Exit.REFUSED, "", refusal("incident_read"))
    assert await run([*before, str(NO_SUCH_ROW)], s) == (
        Exit.REFUSED, "", refusal("incident_read"))


async def test_trace_by_an_event_id_two_tenants_used_keeps_to_the_tokens(
    s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    acme = await rows_of("acme", s, pool, run)
    shared = await pool.fetchval("SELECT event_id FROM events WHERE workflow_id = $1",
                                 acme["event"])
    globex = f"event/globex/{fresh_key()}"
    await pool.execute(
        "INSERT INTO events (workflow_id, run_id, tenant_id, idempotency_key, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state) SELECT $1, run_id, 'globex', $2, event_id,"
        " event_type, schema_version, entity_id, correlation_id, payload_fingerprint,"
        " occurred_at, received_at, state FROM events WHERE workflow_id = $3",
        globex, globex.rsplit("/", 1)[1], acme["event"])
    # Without a token the id is ambiguous, as before; the token's tenant names the one.
    assert (await run(["trace", shared], s))[0] == Exit.USAGE
    code, out, _ = await run(["trace", shared], s, **READER)
    assert code == Exit.OK and out.startswith(acme["event"]), out
    assert globex not in out


async def test_ops_state_of_another_tenants_event_and_of_none_are_refused_alike(
    dev_server: WorkflowEnvironment, database_url: str, tmp_path: Path, pool: asyncpg.Pool,
    run: Run,
) -> None:
    """The record's tenant decides (no run here: Temporal no longer holds them)."""
    s = settings(database_url, tmp_path, dev_server.client.service_client.config.target_host)
    acme, globex = [await rows_of(t, s, pool, run) for t in ("acme", "globex")]
    missing = f"event/acme/{fresh_key()}"  # the id names acme; nothing holds it

    code, out, _ = await run(["state", acme["event"]], s, **READER)
    assert code == Exit.OK and out.startswith("STOPPED (daily_limit)"), out
    theirs = await run(["state", globex["event"]], s, **READER)
    assert theirs == (Exit.REFUSED, "", refusal("event_read"))
    assert await run(["state", missing], s, **READER) == theirs
    code, out, _ = await run(["state", globex["event"]], s)
    assert code == Exit.OK and out.startswith("STOPPED (daily_limit)"), out
    assert (await run(["state", missing], s))[0] == Exit.NOT_FOUND


async def test_an_identity_of_every_tenant_reads_every_tenants_rows(
    s: Settings, pool: asyncpg.Pool, run: Run, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The verifier refuses a token whose tenant is '*' (tollgate/runtime/claims.py), so such an
    identity is stood in here, as the in-process callers of the matrix are: it lists both
    tenants' rows, reads either's, and hears a missing id as not found (exit 4), as
    ``authorized_row`` says it to an identity of every tenant only."""
    from tollgate.cli import ops_authority
    from tollgate.runtime.identity import Identity

    async def everyone(_token: str | None, _s: Settings) -> Identity:
        return Identity(reviewer="ana", roles=("care_lead",), tenant="*")

    monkeypatch.setattr(ops_authority, "identity_of", everyone)
    acme, globex = [await rows_of(t, s, pool, run) for t in ("acme", "globex")]
    code, out, _ = await run(["dlq", "list", "--json"], s, **READER)
    assert code == Exit.OK
    assert {acme["dlq"], globex["dlq"]} <= {str(r["id"]) for r in json.loads(out)}
    code, out, _ = await run(["outbox", "list", "--tenant", "globex", "--json"], s, **READER)
    assert code == Exit.OK and {r["tenant_id"] for r in json.loads(out)} == {"globex"}
    for argv in (["dlq", "show", globex["dlq"]], ["incident", "show", globex["incident"]],
                 ["trace", globex["event"]]):
        code, out, _ = await run(argv, s, **READER)
        assert code == Exit.OK and out, argv
    assert (await run(["outbox", "show", str(NO_SUCH_ROW)], s, **READER))[0] == Exit.NOT_FOUND

"""The rest of the read commands scoped by the caller's token (ADR 0076, its second paragraph):
`ops switches`, `ops modes`, `ops contacts list`, `ops audit --verify`, `items jobs` and the
drafting `ops incident --since`. A token of one tenant reads that tenant's rows only (switches
and modes: also the global '*' rows, which cover it); a `--tenant` naming another is refused in
`ops dlq list`'s words; without a token, as before; an unverifiable token is exit 8. Before,
none of them took `--token` at all (items jobs: no `--token` either).

Each test makes two tenants of its own, so rows other tests write in the shared database
cannot blur what a token sees."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests.cli.helpers import ops_token, run_ops
from tests.cli.read_scope_support import rows_of, settings
from tests.conftest import fresh_key
from tollgate.cli.common import run_in_loop
from tollgate.cli.items import items
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

#: A command's code, output and last error line; ``tenant``: the reader's token (none: none).
Run = Callable[..., Awaitable[tuple[int, str, str]]]


async def answer(run: Run, argv: list[str], s: Settings, **token: str) -> Any:
    """What the command answers in JSON; it must succeed (exit 0)."""
    code, out, err = await run(argv, s, **token)
    assert code == Exit.OK, err
    return json.loads(out)


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    return settings(database_url, tmp_path)


@pytest.fixture
def two() -> tuple[str, str]:
    """Two tenants no other test writes rows of."""
    return fresh_key("mine"), fresh_key("theirs")


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Run:
    """``ops ARGV`` (``items ...`` first: ``tollgate items``) as a reviewer of ``tenant`` (no
    operator role at all), or without a token."""

    async def go(argv: list[str], s: Settings, *, tenant: str | None = None
                 ) -> tuple[int, str, str]:
        capsys.readouterr()
        token = ops_token(s, "care_lead", tenant=tenant, name="rae") if tenant else []
        if argv[0] == "items":
            work = items.main([*argv[1:], *token], prog_name="tollgate items",
                              standalone_mode=False)
            code = await run_in_loop(work, s)
        else:
            code = await run_ops([*argv, *token], s)
        said = capsys.readouterr()
        return code, said.out, (said.err.splitlines() or [""])[-1]

    return go


def refused(argv: list[str], mine: str, theirs: str, rows: str) -> tuple[int, str, str]:
    return (Exit.REFUSED, "", f"tollgate: --tenant {theirs}: the token is {mine}'s and lists"
            f" {mine}'s {rows} only (drop --tenant, or use a token of {theirs})")


async def forged(run: Run, argv: list[str], s: Settings) -> None:
    code, _, err = await run([*argv, "--token", "not-a-token"], s)
    assert code == Exit.NO_IDENTITY and "not-a-token" not in err, err


@pytest.mark.parametrize(("argv", "table"), [
    (["switches", "--json"], "kill_switches"),
    (["modes", "--json"], "rollout_modes"),
], ids=["switches", "modes"])
async def test_switches_and_modes_keep_to_the_tokens_tenant_and_the_global_rows(
    argv: list[str], table: str, two: tuple[str, str], s: Settings, pool: asyncpg.Pool,
    run: Run,
) -> None:
    mine, theirs = two
    adapter = fresh_key("scope")  # an adapter nothing sends to: the rows hold no test's send
    extra = ", mode" if table == "rollout_modes" else ", closed"
    value = "'shadow'" if table == "rollout_modes" else "true"
    for tenant in (mine, theirs, "*"):
        await pool.execute(f"INSERT INTO {table} (adapter, tenant_id{extra}, reason, changed_by)"
                           f" VALUES ($1, $2, {value}, 'read scope', 'op.kim')", adapter, tenant)

    async def seen(**token: str) -> set[str]:
        return {r["tenant_id"] for r in await answer(run, argv, s, **token)
                if r["adapter"] == adapter}

    assert await seen(tenant=mine) == {mine, "*"}
    assert await seen() == {mine, theirs, "*"}  # without a token, as before
    await forged(run, argv, s)


async def test_contacts_list_keeps_to_the_tokens_tenant(
    two: tuple[str, str], s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    from adapters.postgres.contacts import ContactStore
    from contracts.contacts import TenantContact

    mine, theirs = two
    for tenant in two:
        point = TenantContact(kind="domain", value=f"{tenant}.example")
        await ContactStore(pool).add(tenant, point, actor="op.kim", reason="read scope")

    async def listed(of: str, **token: str) -> list[str]:
        argv = ["contacts", "list", "--tenant", of, "--json"]
        return [r["value"] for r in await answer(run, argv, s, **token)]

    assert await listed(mine, tenant=mine) == [f"{mine}.example"]
    argv = ["contacts", "list", "--tenant", theirs]
    assert await run(argv, s, tenant=mine) == refused(argv, mine, theirs, "contact points")
    assert await listed(theirs) == [f"{theirs}.example"]  # without a token, as before
    await forged(run, argv, s)


async def test_audit_verify_checks_the_tokens_tenants_chains_only(
    two: tuple[str, str], s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    mine, theirs = two
    for tenant in two:
        await rows_of(tenant, s, pool, run)

    async def verified(*extra: str, **token: str) -> int:
        argv = ["audit", "--verify", *extra, "--json"]
        return int((await answer(run, argv, s, **token))["events_checked"])

    own = await verified("--tenant", mine)  # without a token, as before
    assert own >= 1 and await verified(tenant=mine) == own
    assert await verified("--tenant", mine, tenant=mine) == own
    assert await verified() > own
    argv = ["audit", "--verify", "--tenant", theirs]
    assert await run(argv, s, tenant=mine) == refused(argv, mine, theirs, "audit chains")
    await forged(run, argv, s)


async def test_items_jobs_keeps_to_the_tokens_tenant(
    two: tuple[str, str], s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    mine, theirs = two
    for tenant, n in ((mine, 2), (theirs, 3)):
        await pool.execute(
            "WITH made AS (INSERT INTO items (tenant, user_id, url, title)"
            " SELECT $1, 'u-' || g, 'https://example.com/' || $1 || '/' || g, 'page ' || g"
            " FROM generate_series(1, $2) g RETURNING id)"
            " INSERT INTO tagging_jobs (item_id, tenant, user_id, state, attempt_count,"
            " last_error) SELECT id, $1, 'u', 'FAILED', 3, 'retryable: provider_503' FROM made",
            tenant, n)

    async def said(*argv: str, **token: str) -> object:
        return await answer(run, ["items", "jobs", *argv, "--json"], s, **token)

    counts = await said(tenant=mine)
    assert counts == {"PENDING": 0, "PROCESSING": 0, "SUCCEEDED": 0, "FAILED": 2}
    failed = await said("--status", "FAILED", tenant=mine)
    assert isinstance(failed, list) and {j["tenant"] for j in failed} == {mine}
    assert len(failed) == 2
    argv = ["items", "jobs", "--status", "FAILED", "--tenant", theirs]
    assert await run(argv, s, tenant=mine) == refused(argv, mine, theirs, "tagging jobs")
    # Without a token, as before: every tenant's counts, --tenant narrowing a listing.
    every = await said()
    assert isinstance(every, dict) and every["FAILED"] >= 5
    theirs_failed = await said("--status", "FAILED", "--tenant", theirs)
    assert isinstance(theirs_failed, list) and len(theirs_failed) == 3
    await forged(run, argv, s)


async def test_an_incident_draft_keeps_to_the_tokens_tenants_evidence(
    two: tuple[str, str], s: Settings, pool: asyncpg.Pool, run: Run,
) -> None:
    mine, theirs = two
    for tenant in two:
        await rows_of(tenant, s, pool, run)

    async def packet(*extra: str, **token: str) -> dict[str, object]:
        argv = ["incident", "--since", "1h", *extra, "--json"]
        return dict((await answer(run, argv, s, **token))["packet"])

    def tenants(p: dict[str, object]) -> set[str]:
        items = p["items"]
        assert isinstance(items, list)
        return {str(i["tenant_id"]) for i in items if i.get("tenant_id")}

    own = await packet(tenant=mine)
    assert own["tenant"] == mine and tenants(own) == {mine}
    every = await packet()  # without a token, as before: every tenant's evidence
    assert every["tenant"] == "*" and {mine, theirs} <= tenants(every)
    argv = ["incident", "--since", "1h", "--tenant", theirs]
    assert await run(argv, s, tenant=mine) == refused(argv, mine, theirs, "incident evidence")
    await forged(run, argv, s)

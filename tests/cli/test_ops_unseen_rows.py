"""The operator commands that act on a row by its id (`ops outbox retry|drop`, `ops incident
review`) check the token against the row's tenant before anything of the row is said, as
`ops dlq approve|replay|close` do (tests/cli/test_ops_authority.py): an id with no row is every
tenant's, so a token of another tenant, one without the role, or none at all gets the same line
and exit code for an existing row and for none, and learns nothing, not even which ids exist.
PostgreSQL only (these commands work while Temporal is down)."""

from __future__ import annotations

import json
from pathlib import Path

import asyncpg
import pytest

from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit

#: A row id no table here reaches: PostgreSQL's bigserial never gets this far in a test database.
NO_SUCH_ROW = 9_000_000_000_000_000_000


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"})


async def outbox_row(pool: asyncpg.Pool, key: str) -> int:
    """An acme row the relay moved aside."""
    raw = json.dumps({"tenant_id": "acme", "idempotency_key": key, "payload": {}})
    return int(await pool.fetchval(
        "INSERT INTO outbox (workflow_id, tenant_id, raw, received_at, attempts, last_error,"
        " parked_at, parked_reason) VALUES ($1, 'acme', $2, now(), 5, 'TimeoutError', now(),"
        " 'delivery_failed') RETURNING id", f"event/acme/{key}", raw))


async def incident_draft(s: Settings, capsys: pytest.CaptureFixture[str]) -> int:
    """An acme postmortem draft, kept by the command (the offline provider)."""
    assert await run_ops(["incident", "--since", "1h", "--tenant", "acme", "--json"], s) == 0
    return int(json.loads(capsys.readouterr().out)["id"])


@pytest.mark.parametrize(("verb", "target", "role", "roleless"), [
    (["outbox", "retry", "--reason", "relay fixed"], "outbox", "on_call", "care_lead"),
    (["outbox", "drop", "--reason", "test traffic"], "outbox", "change_owner", "on_call"),
    (["incident", "review"], "incident", "incident_commander", "on_call"),
], ids=["outbox-retry", "outbox-drop", "incident-review"])
async def test_a_token_cannot_tell_another_tenants_row_from_none(
    verb: list[str], target: str, role: str, roleless: str, s: Settings, pool: asyncpg.Pool,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before, both read the row first and said `no outbox row N` / `no incident draft N`
    (exit 4) to any token or none, while an existing row was refused (exit 1, or 8 without a
    token)."""
    group, action = verb[:2], f"{verb[0]}_{verb[1]}"
    row_id = (await incident_draft(s, capsys) if target == "incident"
              else await outbox_row(pool, f"unseen-{verb[1]}"))

    async def answer(row: int, **token: str) -> tuple[int, str]:
        code = await run_ops([*group, str(row), *verb[2:]], s, **token)
        return code, capsys.readouterr().err.splitlines()[-1]

    said = []
    for token in [{}, {"role": role, "tenant": "globex", "name": "lee"},
                  {"role": roleless, "tenant": "globex", "name": "lan"}]:
        there = await answer(row_id, **token)
        assert await answer(NO_SUCH_ROW, **token) == there, token
        said.append(there)
    assert [code for code, _ in said] == [Exit.NO_IDENTITY, Exit.REFUSED, Exit.REFUSED]
    assert said[1][1] == (f"tollgate: refused: cross_tenant: the token may {action} for its own"
                          " tenant ('globex') only; that id is none of its own (another"
                          " tenant's, or none at all)")
    assert said[2][1].startswith(f"tollgate: refused: role_not_allowed: {action} needs one of")
    for refused in (f"{target}/{row_id}", f"{target}/{NO_SUCH_ROW}"):
        audited = await pool.fetch("SELECT actor, detail FROM audit WHERE target = $1 AND"
                                   " action = $2 ORDER BY id", refused, f"refused:{action}")
        assert [(a["actor"], json.loads(a["detail"])["refusal_code"]) for a in audited] == [
            ("lee", "cross_tenant"), ("lan", "role_not_allowed")]

    # An id with no row is every tenant's: the owner's own token is refused it too (no token
    # is of every tenant), and still acts on its tenant's row. The refusal says so,
    # is of every tenant), in words that let the owner see a mistyped id for what it may be.
    assert await answer(NO_SUCH_ROW, role=role, name="mai") == (Exit.REFUSED, (
        f"tollgate: refused: cross_tenant: the token may {action} for"
        " its own tenant ('acme') only; that id is none of its own (another tenant's, or none"
        " at all)"))
    assert await run_ops([*group, str(row_id), *verb[2:]], s, role=role, name="mai") == Exit.OK
    assert await pool.fetchval("SELECT actor FROM audit WHERE target = $1 AND action = $2",
                               f"{target}/{row_id}", action) == "mai"

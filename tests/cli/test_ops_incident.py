"""`tollgate ops incident` (issue 32 item 2, ADR 0046) on PostgreSQL alone: evidence written
by the real stores becomes a kept draft shown as markdown and JSON; a rerun keeps nothing new;
only an owner's token of the tenant marks it reviewed (refusals audited); bad arguments end in
one line naming the option."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.ops import OpsStore
from adapters.postgres.store import PostgresStore
from tests.cli.helpers import run_ops
from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tollgate.cli import main
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit


@pytest.fixture
def s(database_url: str, tmp_path: Path) -> Settings:
    return Settings.from_env({"DATABASE_URL": database_url, "TOLLGATE_STATE_DIR": str(tmp_path),
                              "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
                              "TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}"})


async def seed(pool: asyncpg.Pool) -> None:
    """A dead letter, two quarantines (one whose detail names a customer), an operator's kill."""
    ops, store = OpsStore(pool), PostgresStore(pool)
    await ops.dead_letter(workflow_id="event/acme/k-drift", error_class="dead_letter",
                          error_code="schema_drift", state="DEAD_LETTERED", owner="intake",
                          replay_plan="fix the producer", tenant_id="acme",
                          redacted_payload={"customer_name": "[text:9]"}, event_id="k-drift",
                          correlation_id="c-1")
    for key in ("q-1", "q-2"):
        await store.quarantine(workflow_id=f"event/acme/{key}", reason_code="bad_signature",
                               detail="signature of Lan Nguyen lan@example.com did not match",
                               redacted_payload=None, received_at=datetime.now(UTC),
                               tenant_id="acme", event_id=key)
    await ops.set_switch(adapter="messaging", tenant_id="acme", closed=True,
                         reason="customer 0912345678 complained", actor="op.kim")


async def test_a_draft_is_kept_shown_and_reviewed_once_by_an_owner(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    await seed(pool)

    assert await run_ops(["incident", "--since", "1h", "--tenant", "acme", "--json"], s) == 0
    made = json.loads(capsys.readouterr().out)
    packet_text = json.dumps(made["packet"])
    for personal in ("Lan", "lan@example.com", "0912345678", "op.kim", "[text:9]"):
        assert personal not in packet_text
    totals = next(i for i in made["packet"]["items"] if i["ref"] == "sum:window")["figures"]
    assert (totals["dead_letters"], totals["quarantined"], totals["kill_switch_changes"]) == (
        1, 2, 1)
    impact = " ".join(x["text"] for x in made["draft"]["impact"])
    assert "3 failures: 1 dead letter," in impact and "2 quarantined events" in impact

    # The same window again: the same packet, so the same row, nothing new kept.
    assert await run_ops(["incident", "--since", made["packet"]["since"], "--until",
                          made["packet"]["until"], "--tenant", "acme"], s) == 0
    assert f"incident draft {made['id']} already kept" in capsys.readouterr().out

    assert await run_ops(["incident", "show", str(made["id"])], s) == 0
    shown = capsys.readouterr().out
    assert "## Suspected cause" in shown and "[q:reason:bad_signature]" in shown
    assert "(intact)" in shown and "accepts every sentence" in shown

    assert await run_ops(["incident", "review", str(made["id"])], s, role="on_call") == (
        Exit.REFUSED)
    assert await run_ops(["incident", "review", str(made["id"])], s, role="change_owner",
                         tenant="globex") == Exit.REFUSED
    assert await run_ops(["incident", "review", str(made["id"])], s) == Exit.NO_IDENTITY
    assert await run_ops(["incident", "review", str(made["id"])], s, role="change_owner",
                         name="lee") == 0
    assert await run_ops(["incident", "review", str(made["id"])], s, role="incident_commander",
                         name="kim") == Exit.REFUSED  # the first review stands
    capsys.readouterr()
    assert await run_ops(["incident", "show", str(made["id"]), "--json"], s) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["status"], row["reviewed_by"], row["packet_intact"]) == ("REVIEWED", "lee", True)
    audit = await pool.fetch("SELECT actor, action FROM audit WHERE target = $1 ORDER BY id",
                             f"incident/{made['id']}")
    assert [(a["actor"], a["action"]) for a in audit] == [
        ("op.kim", "refused:incident_review"), ("op.kim", "refused:incident_review"),
        ("lee", "incident_review")]


async def test_a_tampered_packet_is_shown_and_never_reviewed(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await run_ops(["incident", "--since", "2h", "--tenant", "acme", "--json"], s) == 0
    made = json.loads(capsys.readouterr().out)
    await pool.execute("UPDATE incident_drafts SET packet = jsonb_set(packet, '{tenant}',"
                       " '\"globex\"') WHERE id = $1", made["id"])

    assert await run_ops(["incident", "show", str(made["id"])], s) == 0
    assert "DOES NOT MATCH" in capsys.readouterr().out
    assert await run_ops(["incident", "review", str(made["id"])], s,
                         role="change_owner") == Exit.REFUSED
    assert "no longer matches its packet" in capsys.readouterr().err


async def test_an_unknown_draft_is_not_found(
    s: Settings, pool: asyncpg.Pool, capsys: pytest.CaptureFixture[str],
) -> None:
    assert await run_ops(["incident", "show", "99999"], s) == Exit.NOT_FOUND
    assert capsys.readouterr().err.strip() == "tollgate: no incident draft 99999"


@pytest.mark.parametrize(("argv", "named"), [
    ([], "--since is required"),
    (["--since", "yesterday"], "'--since'"),
    (["--since", "6h\x00"], "'--since'"),
    (["--since", "1h", "--until", "2h"], "--until must be after --since"),
    (["--since", "40d"], "31 days at most"),
    (["--since", "1h", "--tenant", "ac\x00me"], "'--tenant'"),
    (["show", "abc"], "'ID'"),
])
def test_bad_arguments_end_in_one_line_naming_the_option(
    argv: list[str], named: str, database_url: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.setenv("TOLLGATE_STATE_DIR", str(tmp_path))
    with pytest.raises(SystemExit) as stopped:
        main(["ops", "incident", *argv])
    err = capsys.readouterr().err
    assert stopped.value.code == Exit.USAGE
    assert named in err and "Traceback" not in err and len(err.strip().splitlines()) == 1

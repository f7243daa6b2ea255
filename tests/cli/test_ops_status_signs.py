"""`tollgate ops status` on runs that wait without a word: held runs by what holds them (and
what wakes them), reviewer notices that did not go out, and the codec server the Web UI needs.
Rows are written as the worker writes them; the screen is the console script's."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import pytest

from adapters.postgres.metrics import MetricsStore
from tests.cli.helpers import base_env, tollgate
from tests.cli.ops_status_support import add_event
from tests.conftest import TEST_KEYS_FILE
from tests.pg_databases import fresh_database
from tollgate.codec.keyring import load_key_ring
from tollgate.codec.server import start_codec_server
from tollgate.config.service import CodecSettings
from tollgate.observability.metric_families import families
from tollgate.runtime.exits import Exit


async def held_send(conn: asyncpg.Connection, tenant: str, since: timedelta,
                    state: str = "APPROVED", looked: timedelta = timedelta(0)) -> str:
    """An event whose send a kill switch held ``since`` ago and that last looked ``looked``
    ago (the send_holds row the step watch writes), its events row in ``state``."""
    await add_event(conn, tenant, state, since)
    wf = await conn.fetchval("SELECT workflow_id FROM events ORDER BY id DESC LIMIT 1")
    await conn.execute(
        "INSERT INTO send_holds (workflow_id, tenant_id, adapter, since, checked_at) VALUES"
        " ($1, $2, 'messaging', now() - $3::interval, now() - $4::interval)",
        wf, tenant, since, looked)
    return str(wf)


@pytest.fixture
async def holds(pg_server: str) -> AsyncIterator[str]:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await conn.execute(
        "INSERT INTO kill_switches (adapter, tenant_id, closed, reason, changed_by)"
        " VALUES ('messaging', 'acme', true, 'incident', 'kim')")
    # One has not looked again for 2 h, past the fallback timer's 1 h cap: its worker is gone.
    await held_send(conn, "acme", timedelta(hours=2), looked=timedelta(hours=2))
    await held_send(conn, "acme", timedelta(minutes=5))
    # Held once, sent since: that hold is over and is not shown.
    await held_send(conn, "acme", timedelta(hours=9), state="SUCCEEDED")
    # globex's switch was reopened; its run has not looked again yet.
    await held_send(conn, "globex", timedelta(minutes=20))
    await add_event(conn, "globex", "HELD_AT_GATE", timedelta(minutes=40))
    await conn.close()
    yield url


async def scraped(url: str, name: str) -> dict[str, float]:
    """One family of /metrics as the collector builds it: {label values: value}."""
    pool = await asyncpg.create_pool(url, min_size=1, max_size=1)
    try:
        gauges = await MetricsStore(pool).gauges(datetime.now(UTC))
    finally:
        await pool.close()
    return {",".join(s.labels.values()): s.value for f in families(gauges) if f.name == name
            for s in f.samples}


def status(url: str, tmp_path: Path, *args: str, **env: str) -> tuple[int, str]:
    said = tollgate("ops", "status", *args, env=base_env(tmp_path, DATABASE_URL=url, **env))
    assert said.clean(), said.text
    return said.code, said.out


def test_each_hold_shows_with_its_count_its_oldest_and_what_wakes_it(
    holds: str, tmp_path: Path,
) -> None:
    code, out = status(holds, tmp_path, "--json", "--max-open-minutes", "6000")
    report = json.loads(out)
    got = {h["held_by"]: (h["runs"], h["released"], round(h["oldest_age_s"] / 60))
           for h in report["holds"]}
    assert got == {"kill_switch:messaging/acme": (2, False, 120),
                   "kill_switch:messaging/globex": (1, True, 20),
                   "gate:globex": (1, False, 40)}
    assert code == Exit.ATTENTION
    assert [h["silent"] for h in report["holds"]] == [0, 1, 0]
    assert ("1 held run(s) have not looked again for over 1h 15m: is their worker running? "
            "(tollgate trace EVENT shows when each last looked)") in report["needs_a_human"]

    _code, text = status(holds, tmp_path, "--max-open-minutes", "6000")
    assert ("held by kill_switch:messaging/acme: 2 run(s), oldest 2h 00m · wakes on "
            "tollgate ops reopen --adapter messaging --tenant 'acme', else its fallback timer "
            "(30 s doubling to 1 h)") in text
    assert "held by kill_switch:messaging/globex: 1 run(s), oldest 20m · wakes on the switch " \
           "is open again" in text
    assert ("held by gate:globex: 1 run(s), oldest 40m · wakes on a decided review of "
            "globex") in text


async def test_metrics_carry_the_holds_and_the_notices(holds: str, notices: str) -> None:
    assert await scraped(holds, "tollgate_held_runs") == {
        "kill_switch:messaging/acme": 2.0, "kill_switch:messaging/globex": 1.0,
        "gate:globex": 1.0}
    assert await scraped(notices, "tollgate_review_notices_undelivered") == {
        "retrying": 1.0, "given_up": 1.0, "unknown": 1.0}


@pytest.fixture
async def notices(pg_server: str) -> AsyncIterator[str]:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await add_event(conn, "acme", "AWAITING_REVIEW", timedelta(minutes=5), timedelta(hours=3))
    for step, status_, attempts in (("opened", "FAILED", 5), ("sla", "UNKNOWN", 1),
                                    ("expired", "FAILED", 2), ("opened2", "SENT", 1)):
        await conn.execute(
            "INSERT INTO review_notices (notice_key, workflow_id, tenant_id, step, channel,"
            " status, attempts) VALUES ($1, 'event/acme/n', 'acme', $2, 'slack', $3, $4)",
            f"event/acme/n#1#{step}", step, status_, attempts)
    await conn.close()
    yield url


def test_reviewer_notices_not_delivered_are_counted_and_need_a_human(
    notices: str, tmp_path: Path,
) -> None:
    code, out = status(notices, tmp_path, "--json")
    report = json.loads(out)
    assert report["notices"] == {"retrying": 1, "given_up": 1, "unknown": 1}
    assert code == Exit.ATTENTION
    assert "2 reviewer notice(s) not delivered" in report["needs_a_human"]
    _code, text = status(notices, tmp_path)
    assert "reviewer notices not delivered: 1 given up, 1 unknown, 1 being retried" in text


@pytest.fixture
async def calm(pg_server: str) -> AsyncIterator[str]:
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await add_event(conn, "acme", "SUCCEEDED", timedelta(hours=5))
    await conn.close()
    yield url


def test_a_codec_server_that_does_not_answer_needs_a_human(calm: str, tmp_path: Path) -> None:
    ring = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
    server = start_codec_server(ring, origins=[])
    try:
        # As `tollgate dev` leaves them for other terminals: the URL and the token.
        (tmp_path / "endpoints.json").write_text(json.dumps({"codec_url": server.url}))
        (tmp_path / "codec-token").write_text(server.token + "\n")
        code, out = status(calm, tmp_path)
        assert code == Exit.OK, out
        assert f"codec: ok ({server.url})" in out
        # Another token than the server's: up, but this terminal is refused.
        code, out = status(calm, tmp_path, TOLLGATE_CODEC_TOKEN="x" * 24)
        assert code == Exit.ATTENTION and "codec: refused" in out
    finally:
        server.stop()
    code, out = status(calm, tmp_path, "--json")
    report = json.loads(out)
    assert code == Exit.ATTENTION
    assert report["codec"]["state"] == "unreachable"
    assert "codec server unreachable: the Web UI cannot show payloads" in report["needs_a_human"]
    # No codec server known to this terminal: nothing to probe, nothing to page on.
    (tmp_path / "endpoints.json").unlink()
    code, out = status(calm, tmp_path)
    assert code == Exit.OK and "codec: not configured" in out


def test_the_codec_url_setting_wins_and_never_shows_a_path(calm: str, tmp_path: Path) -> None:
    port_free = f"http://127.0.0.1:9/{uuid.uuid4().hex}"  # discard port: nothing listens
    code, out = status(calm, tmp_path, TOLLGATE_CODEC_URL=port_free)
    assert code == Exit.ATTENTION
    assert "codec: unreachable (http://127.0.0.1:9)" in out
    assert port_free.rsplit("/", 1)[1] not in out


@pytest.fixture
async def gate_held(pg_server: str) -> AsyncIterator[tuple[str, str]]:
    """An event held at the gate 40 minutes ago, whose gate count step has failed 7 tries."""
    url = await fresh_database(pg_server)
    conn = await asyncpg.connect(url)
    await add_event(conn, "globex", "HELD_AT_GATE", timedelta(minutes=40))
    wf = str(await conn.fetchval("SELECT workflow_id FROM events"))
    await conn.execute(
        "INSERT INTO state_transitions (workflow_id, seq, from_state, to_state, actor, reason, at)"
        " VALUES ($1, 1, 'DRAFTED', 'HELD_AT_GATE', 'gate', 'backlog', now() - interval '40 min')",
        wf)
    await conn.execute(
        "INSERT INTO failing_steps (workflow_id, step, tenant_id, attempts, error_class,"
        " error_code) VALUES ($1, 'count_gate_inputs', 'globex', 7, 'unclassified', 'DataError')",
        wf)
    await conn.close()
    yield url, wf


def test_trace_says_what_holds_an_event_and_which_step_keeps_failing(
    gate_held: tuple[str, str], tmp_path: Path,
) -> None:
    url, wf = gate_held
    # Temporal down: the PostgreSQL half of the trace is what an operator has then.
    said = tollgate("trace", wf, env=base_env(tmp_path, DATABASE_URL=url,
                                              TEMPORAL_ADDRESS="127.0.0.1:1"))
    assert said.code == Exit.OK and said.clean(), said.text
    held = next(x for x in said.out.splitlines() if x.startswith("  held "))
    assert held.startswith("  held      by gate:globex since ")
    assert held.endswith("wakes on a decided review of globex (the backlog under the policy's "
                         "limit), else its fallback timer (10 min doubling to 1 h)")
    assert "  failing   count_gate_inputs: 7 tries since " in said.out
    assert "unclassified/DataError" in said.out
    said = tollgate("trace", wf, "--json", env=base_env(tmp_path, DATABASE_URL=url,
                                                        TEMPORAL_ADDRESS="127.0.0.1:1"))
    report = json.loads(said.out)
    assert report["hold"]["held_by"] == "gate:globex"
    assert [f["step"] for f in report["failing_steps"]] == ["count_gate_inputs"]

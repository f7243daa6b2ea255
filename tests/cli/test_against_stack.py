"""The CLI against a running ``tollgate dev`` (started as a user would, on free ports): every
read-only command answers with its documented exit code and exits cleanly, run after run; the
README's example works; an oversized event is quarantined without stopping its batch; a
decision answers the draft version and request the reviewer was shown."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import ROOT, TOLLGATE, Said, base_env, tollgate
from tests.eventually import eventually
from tests.pg_folder import pg_folder
from tests.ports import free_port
from tollgate.runtime.exits import Exit

pytestmark = pytest.mark.e2e
EXAMPLE = "tollgate/dev/examples/care_due.json"
EXAMPLE_ID = "event/acme/care-C-1001-0930"


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, str]]:
    # Outside pytest's temp root (tests/pg_folder.py says why): under pytest-xdist, initdb was
    # refused its folder there.
    with pg_folder("tollgate-cli-") as base, _running_stack(base / "state") as running:
        yield running


@contextlib.contextmanager
def _running_stack(state: Path) -> Iterator[dict[str, str]]:
    state.mkdir(parents=True)
    env = base_env(state, TOLLGATE_METRICS_PORT="0",  # 0: any free port
                   TOLLGATE_SDK_METRICS_PORT="0")
    log = (state / "dev.log").open("w")
    proc = subprocess.Popen(  # noqa: S603 - our own console script
        [TOLLGATE, "dev", "--temporal-port", str(free_port()), "--ui-port", str(free_port()),
         "--crm-port", str(free_port()), "--messaging-port", str(free_port()),
         "--http-port", str(free_port())],
        env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(600):  # the stack's own start-up, not a measured time
            if "worker running" in (state / "dev.log").read_text() or proc.poll() is not None:
                break
            time.sleep(0.2)
        assert proc.poll() is None, (state / "dev.log").read_text()
        yield env
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


async def wait_for(env: dict[str, str], argv: list[str], wanted: str) -> Said:
    return await eventually(lambda: tollgate(*argv, env=env), f"{argv} printing {wanted!r}",
                            until=lambda said: wanted in said.out, timeout=60, interval=0.3)


def seen_of(env: dict[str, str], workflow_id: str) -> str:
    said = tollgate("review", "show", workflow_id, "--json", env=env)
    assert said.code == 0, said.text
    seen = json.loads(said.out)["seen"]
    assert seen, said.out
    return str(seen)


async def test_readme_example_then_read_only_commands_exit_cleanly_every_time(
    env: dict[str, str],
) -> None:
    said = tollgate("submit", "--sign", EXAMPLE, env=env)
    assert (said.code, said.out.split()) == (0, ["accepted", EXAMPLE_ID]), said.text
    await wait_for(env, ["review", "list", "--tenant", "acme"], EXAMPLE_ID)
    # Each command that reaches Temporal, five times: its client is what could abort the
    # process at exit (docs/cli.md, "Exiting cleanly"; one run in five before the fix).
    with_client = [
        (["review", "list"], Exit.OK, EXAMPLE_ID),
        (["review", "show", EXAMPLE_ID], Exit.OK, "decide with --seen v1:"),
        (["ops", "state", EXAMPLE_ID], Exit.OK, "AWAITING_REVIEW"),
        (["submit", "--sign", EXAMPLE], Exit.OK, f"duplicate {EXAMPLE_ID}"),
        (["ops", "state", "event/acme/no-such-key"], Exit.NOT_FOUND, ""),
        (["review", "show", "event/acme/no-such-key"], Exit.NOT_FOUND, ""),
    ]
    # Once: they need only PostgreSQL and make no Temporal client, so a second run of the same
    # command tests nothing the first did not (≈ 1 s of CPU each).
    postgres_only = [
        (["ops", "switches"], Exit.OK, "everything open"),
        (["ops", "dlq", "list"], Exit.OK, "dead letters"),
    ]
    runs = 0
    for round_ in range(5):  # 32 runs, 30 of them with a client: the figure, 30
        for argv, code, text in with_client + (postgres_only if round_ == 0 else []):
            said = tollgate(*argv, env=env)
            runs += 1
            assert said.clean(), (round_, argv, said.text)
            assert said.code == code, (round_, argv, said.text)
            assert text in said.out, (argv, said.out)
            if code != Exit.OK:
                assert len(said.err.strip().splitlines()) == 1, said.err
    assert runs == 32


def test_json_output_is_parseable(env: dict[str, str]) -> None:
    said = tollgate("ops", "state", EXAMPLE_ID, "--json", env=env)
    assert said.code == 0 and json.loads(said.out)["workflow_id"] == EXAMPLE_ID
    said = tollgate("ops", "switches", "--json", env=env)
    assert said.code == 0 and json.loads(said.out) == []
    said = tollgate("submit", "--sign", EXAMPLE, "--json", env=env)
    assert said.code == 0 and json.loads(said.out)["status"] == "duplicate"


def test_oversized_event_is_quarantined_and_the_batch_goes_on(
    env: dict[str, str], tmp_path: Path
) -> None:
    base = json.loads((ROOT / EXAMPLE).read_text())
    marker = "PRIVATE-NOTE-"
    big = {**base, "idempotency_key": "big-note-1", "event_id": "evt-big-note-1",
           "payload": {**base["payload"], "notes": marker * 80_000}}  # ~1 MB
    after = {**base, "idempotency_key": "after-big-1", "event_id": "evt-after-big-1",
             "entity_id": "C-2001", "tenant_id": "globex",
             "payload": {**base["payload"], "customer_id": "C-2001"}}
    batch = tmp_path / "batch.json"
    batch.write_text(json.dumps([big, after]))
    said = tollgate("submit", "--sign", str(batch), env=env)
    assert said.code == Exit.REFUSED and said.clean(), said.text[:2000]
    first, second = said.out.splitlines()
    assert first.startswith("invalid   quarantine/") and "too_large" in first
    assert second == "accepted  event/globex/after-big-1"
    assert marker not in said.text
    quarantined = first.split()[1].rstrip(":")
    state = tollgate("ops", "state", quarantined, env=env)  # why, as `trace` says it
    assert state.out.strip() == "QUARANTINED (too_large)" and marker not in state.text
    state = tollgate("ops", "state", quarantined, "--json", env=env)
    assert json.loads(state.out)["reason_code"] == "too_large", state.text


async def test_a_decision_answers_the_version_and_request_it_was_shown(env: dict[str, str]) -> None:
    shown = seen_of(env, EXAMPLE_ID)
    # A reviewer token from the stack's own dev key, as the README walk gets one.
    issued = tollgate("dev", "token", "--reviewer", "lan.nguyen", "--role", "care_lead",
                      "--tenant", "acme", env=env)
    assert issued.code == Exit.OK, issued.text
    who = ["--token", issued.out.strip()]
    said = tollgate("review", "request-info", EXAMPLE_ID, "--seen", shown, *who,
                    "--reason", "which clinic?", env=env)
    assert said.code == Exit.OK, said.text
    newer = await wait_for(env, ["review", "show", EXAMPLE_ID], "decide with --seen v2:")
    # Approving what was shown before the new draft must not approve the new one.
    said = tollgate("review", "approve", EXAMPLE_ID, "--seen", shown, *who, "--reason", "ok",
                    env=env)
    assert said.code == Exit.REFUSED and said.out.startswith("refused: "), said.text
    assert "decide with --seen v2:" in newer.out
    said = tollgate("review", "approve", EXAMPLE_ID, "--seen", seen_of(env, EXAMPLE_ID), *who,
                    "--reason", "correct", env=env)
    assert (said.code, said.out.strip()) == (Exit.OK, "accepted: approve accepted"), said.text
    await wait_for(env, ["ops", "state", EXAMPLE_ID], "SUCCEEDED")


def test_an_unsigned_delivery_is_refused_in_one_line_and_never_burns_its_key(
    env: dict[str, str], tmp_path: Path
) -> None:
    base = json.loads((ROOT / EXAMPLE).read_text())
    event = tmp_path / "unsigned.json"
    event.write_text(json.dumps({**base, "idempotency_key": "resend-1",
                                 "event_id": "evt-resend-1"}))
    first = tollgate("submit", str(event), env=env)  # no signature: refused, as over HTTP
    assert first.code == Exit.REFUSED and first.clean(), first.text
    assert first.out.startswith("invalid   quarantine/") and "signature_missing" in first.out
    assert "event/acme/resend-1" not in first.out  # told nothing about the key
    again = tollgate("submit", "--sign", str(event), env=env)
    assert (again.code, again.out.strip()) == (Exit.OK, "accepted  event/acme/resend-1"), \
        again.text

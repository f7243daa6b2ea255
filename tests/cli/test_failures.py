"""The CLI's failure table without any server: each failure is one line and its own exit code
(docs/cli.md), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import Said, base_env, tollgate
from tests.ports import free_port
from tollgate.runtime.exits import Exit


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    # Nothing listens on this port: the Temporal server is "down".
    return base_env(tmp_path / "state", TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}")


def one_line_error(said: Said) -> str:
    assert said.clean(), said.text
    lines = said.err.strip().splitlines()
    assert len(lines) == 1, said.err
    return lines[0]


@pytest.mark.parametrize("argv", [
    ["review", "list"], ["review", "show", "event/acme/k1"], ["ops", "state", "event/acme/k1"],
])
def test_temporal_down_names_the_address_and_how_to_start_it(
    env: dict[str, str], argv: list[str]
) -> None:
    said = tollgate(*argv, env=env)
    line = one_line_error(said)
    assert said.code == Exit.UNREACHABLE
    assert env["TEMPORAL_ADDRESS"] in line and "tollgate dev" in line


def test_submit_with_temporal_down_is_one_line(env: dict[str, str]) -> None:
    said = tollgate("submit", "tollgate/dev/examples/care_due.json", env=env)
    assert said.code == Exit.UNREACHABLE and env["TEMPORAL_ADDRESS"] in one_line_error(said)


@pytest.mark.parametrize("argv", [["ops", "switches"], ["ops", "dlq", "list"]])
def test_postgres_unreachable_never_shows_the_url(tmp_path: Path, argv: list[str]) -> None:
    url = f"postgresql://ops:hunter2@127.0.0.1:{free_port()}/tollgate"
    said = tollgate(*argv, env=base_env(tmp_path, DATABASE_URL=url))
    line = one_line_error(said)
    assert said.code == Exit.UNREACHABLE and "PostgreSQL" in line
    assert "hunter2" not in said.text


def test_serve_with_postgres_down_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    # It was the pool's RetryableError as a traceback, printed by the interpreter.
    url = f"postgresql://ops:hunter2@127.0.0.1:{free_port()}/tollgate"
    said = tollgate("serve", "--port", str(free_port()),
                    env=base_env(tmp_path, DATABASE_URL=url))
    # Its start's warnings are JSON log lines (reviewer_identity_unset, ADR 0086).
    lines = [line for line in said.err.splitlines() if not line.startswith("{")]
    assert (said.code, lines) == (Exit.UNREACHABLE, [
        "tollgate: cannot reach PostgreSQL: start the stack with `tollgate dev` (or set "
        "DATABASE_URL)"]), said.text
    assert "hunter2" not in said.text and "Traceback" not in said.text


def test_missing_and_unreadable_files(env: dict[str, str], tmp_path: Path) -> None:
    said = tollgate("submit", str(tmp_path / "nope.json"), env=env)
    assert said.code == Exit.FILE and "no such file" in one_line_error(said)
    said = tollgate("submit", str(tmp_path), env=env)
    assert said.code == Exit.FILE and "folder" in one_line_error(said)
    latin = tmp_path / "latin1.json"
    latin.write_bytes(b'{"note": "caf\xe9"}')
    said = tollgate("submit", str(latin), env=env)
    assert said.code == Exit.FILE and "UTF-8" in one_line_error(said)


@pytest.mark.parametrize("argv", [
    ["submit"], ["review", "show"], ["ops", "dlq", "show", "abc"], ["nope"],
    ["review", "approve", "event/acme/k1", "--seen", "latest", "--reason", "b"],
    ["review", "approve", "event/acme/k1", "--reason", "b"],
    ["ops", "dlq", "list", "--status", "LOST"],
])
def test_bad_arguments_exit_2_in_one_line(env: dict[str, str], argv: list[str]) -> None:
    said = tollgate(*argv, env=env)
    assert said.code == Exit.USAGE
    assert "--help" in one_line_error(said)


def test_a_group_alone_shows_its_commands(env: dict[str, str]) -> None:
    said = tollgate("review", env=env)
    assert said.code == Exit.USAGE and said.clean()
    assert "approve" in said.err and "request-info" in said.err and "review_cmd" not in said.err


def test_version_and_help_show_defaults(env: dict[str, str]) -> None:
    said = tollgate("--version", env=env)
    assert said.code == 0 and said.out.startswith("tollgate, version ")
    said = tollgate("ops", "kill", "--help", env=env)
    assert said.code == 0 and "[default: *]" in said.out and "--token" in said.out


def test_json_is_offered_on_every_command_that_prints_records(env: dict[str, str]) -> None:
    for argv in (["submit"], ["review", "list"], ["review", "show"], ["ops", "state"],
                 ["ops", "switches"], ["ops", "dlq", "list"], ["ops", "dlq", "show"],
                 ["ops", "sweep"]):
        said = tollgate(*argv, "--help", env=env)
        assert said.code == 0 and "--json" in said.out, argv


@pytest.mark.parametrize("argv", [
    ["chaos", "--seed", "1", "--events", "1"], ["chaos", "--seeds", "1-2", "--events", "1"]])
def test_a_folder_that_cannot_be_made_is_a_file_error(
        env: dict[str, str], tmp_path: Path, argv: list[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    said = tollgate(*argv, "--state-dir", str(blocker / "state"), env=env)
    line = one_line_error(said)
    assert said.code == Exit.FILE and str(blocker) in line and "not a directory" in line


def test_sign_without_a_tenants_file_is_a_file_error(env: dict[str, str], tmp_path: Path) -> None:
    event = tmp_path / "e.json"
    event.write_text(json.dumps({"tenant_id": "acme"}))
    said = tollgate("submit", "--sign", str(event), env=env)
    assert said.code == Exit.FILE and "tenants file" in one_line_error(said)


@pytest.mark.parametrize("argv", [
    ["review", "list"], ["review", "show", "event/acme/k1"], ["ops", "state", "event/acme/k1"],
])
def test_a_fresh_state_folder_without_a_stack_names_the_key_ring_first(
    env: dict[str, str], argv: list[str]
) -> None:
    # docs/cli.md: local files are checked before any server is asked, so a fresh folder with
    # nothing running ends at 5, and the line's first remedy also starts the servers.
    fresh = {k: v for k, v in env.items() if k not in ("TOLLGATE_KEYS_FILE", "TOLLGATE_KEYS")}
    said = tollgate(*argv, env=fresh)
    line = one_line_error(said)
    assert said.code == Exit.FILE, said.text
    assert line.startswith("tollgate: payload key ring not found: ")
    assert "run `tollgate dev` once" in line and "TOLLGATE_KEYS_FILE" in line
    assert env["TEMPORAL_ADDRESS"] not in line


def test_a_postgres_only_command_needs_no_key_ring(tmp_path: Path) -> None:
    env = {k: v for k, v in base_env(tmp_path / "state").items()
           if k not in ("TOLLGATE_KEYS_FILE", "TOLLGATE_KEYS")}
    said = tollgate("ops", "dlq", "list", env=env)
    line = one_line_error(said)
    assert said.code == Exit.UNREACHABLE and "no PostgreSQL" in line and "key ring" not in line

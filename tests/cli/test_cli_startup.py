"""`tollgate` imports a command's module only when that command is named (tollgate/cli/lazy.py),
and so do its `ops` and `review` groups. Their help still lists every command as the command's
own help would, and what stops before Temporal (help, a usage error, PostgreSQL down) leaves the
Temporal SDK unimported; the help and usage errors leave the settings tree unimported too."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest

from tests.cli.helpers import ROOT, base_env
from tests.ports import free_port
from tollgate.cli import cli
from tollgate.cli.lazy import LazyGroup
from tollgate.cli.ops import ops
from tollgate.cli.review import review
from tollgate.runtime.exits import Exit

#: Runs the console script's ``main`` with argv[2:] and writes its exit code and every module
#: it imported to argv[1].
PROBE = """
import json, sys
from tollgate.cli import main
try:
    main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""
TEMPORAL = "temporalio"
SETTINGS = "tollgate.config.settings"
#: structlog's optional console renderer and traceback reprs: the logs never use them, and the
#: tables import rich when they print (ADR 0068).
RICH = "rich"
#: Every lazy group, with the name its help shows it by.
GROUPS = {"tollgate": cli, "tollgate ops": ops, "tollgate review": review}


def modules_of(group: LazyGroup) -> set[str]:
    """The modules a group's table names for its commands."""
    return {where.partition(":")[0] for where, _ in group.lazy.values()}


def run(tmp_path: Path, *argv: str, **env: str) -> tuple[int, set[str], str]:
    """The exit code, the modules imported and what stderr said."""
    where = tmp_path / "probe.json"
    done = subprocess.run([sys.executable, "-c", PROBE, str(where), *argv],  # noqa: S603
                          env=base_env(tmp_path, **env), cwd=ROOT, capture_output=True,
                          text=True, timeout=60, check=False)
    found = json.loads(where.read_text(encoding="utf-8"))
    return found["code"], set(found["modules"]), done.stderr


@pytest.mark.parametrize("name", GROUPS)
def test_each_summary_is_what_its_command_s_own_help_shows(name: str) -> None:
    """The tables in tollgate/cli/__init__.py, ops.py and review.py, held to each command's
    docstring: at every width Click could give it, the summary shortens to the same words."""
    group = GROUPS[name]
    ctx = click.Context(group)
    for command_name in group.list_commands(ctx):
        command = group.load(command_name)
        assert not command.hidden, f"{command_name}: a hidden command has no row in the table"
        stand_in = click.Command(command_name, help=group.lazy[command_name][1])
        for limit in range(10, 200):
            assert (stand_in.get_short_help_str(limit)
                    == command.get_short_help_str(limit)), command_name


@pytest.mark.parametrize("name", GROUPS)
@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_the_help_from_the_table_is_the_help_of_the_loaded_commands(
        monkeypatch: pytest.MonkeyPatch, columns: str, name: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    shared = GROUPS[name]

    def group() -> tuple[LazyGroup, click.Context]:
        # Two groups of their own, each with its context made as the console script's is (the
        # root's context settings applied): click caches a command's help option on first use,
        # so the shared group, used by other tests in this process, may hold one made otherwise.
        made = LazyGroup(name=name.rpartition(" ")[2], lazy=shared.lazy, params=shared.params,
                         help=shared.help, context_settings=shared.context_settings)
        return made, click.Context(made, info_name=name, **cli.context_settings)

    fresh, fresh_ctx = group()
    from_table = fresh.get_help(fresh_ctx)
    loaded, ctx = group()
    for command_name in loaded.list_commands(ctx):
        loaded.get_command(ctx, command_name)
    assert set(loaded.commands) == set(shared.lazy)
    assert from_table == loaded.get_help(ctx)


@pytest.mark.parametrize("argv", [["--help"], ["submit", "--help"], ["ops", "--help"],
                                  ["review", "--help"], ["ops", "status", "--help"]])
def test_help_imports_neither_temporal_nor_the_settings(tmp_path: Path, argv: list[str]) -> None:
    code, modules, _ = run(tmp_path, *argv)
    assert code == Exit.OK
    assert "structlog" in modules  # the logs were configured, without rich
    # Nor PostgreSQL's driver: `ops status` needs it once it runs, its help does not.
    assert not {TEMPORAL, SETTINGS, RICH, "asyncpg"} & modules
    # The options need a few patterns and choices, not every contract's model (ADR 0068).
    assert not {"contracts.drafting", "contracts.review", "contracts.events"} & modules


def test_a_mistyped_command_is_a_usage_error_that_still_suggests(tmp_path: Path) -> None:
    code, modules, err = run(tmp_path, "sumbit")
    assert code == Exit.USAGE
    assert "No such command 'sumbit'. Did you mean 'submit'?" in err
    assert TEMPORAL not in modules
    assert SETTINGS not in modules


@pytest.mark.parametrize("group", ["ops", "review"])
def test_a_group_s_help_imports_none_of_its_commands(tmp_path: Path, group: str) -> None:
    """`ops --help` and `review --help` import what `tollgate --help` does and the group's own
    module, nothing else: before their groups were lazy they imported every command's module and,
    through them, asyncpg, pydantic and the PostgreSQL adapters (376 and 335 modules, not 226)."""
    _, root, _ = run(tmp_path, "--help")
    code, modules, err = run(tmp_path, group, "--help")
    assert code == Exit.OK, err
    assert modules - root == {f"tollgate.cli.{group}"}


@pytest.mark.parametrize(("argv", "own"), [
    (["ops", "status", "--help"], "tollgate.cli.ops_status"),
    (["review", "list", "--help"], "tollgate.cli.review_list"),
    (["ops", "stauts"], None),
])
def test_a_command_imports_no_other_command_of_its_group(
        tmp_path: Path, argv: list[str], own: str | None) -> None:
    """A command loads its own module; a mistyped one loads none, and Click still suggests from
    every command's name."""
    code, modules, err = run(tmp_path, *argv)
    assert code == (Exit.OK if own else Exit.USAGE), err
    others = modules_of(GROUPS[f"tollgate {argv[0]}"]) - {own}
    assert not others & modules
    assert own is None or own in modules
    assert own or "Did you mean one of: 'state', 'status'?" in err


def test_version_is_read_when_asked(tmp_path: Path) -> None:
    code, modules, _ = run(tmp_path, "--help")
    assert code == Exit.OK
    assert "importlib.metadata" not in modules
    code, modules, _ = run(tmp_path, "--version")
    assert code == Exit.OK
    assert "importlib.metadata" in modules


def test_ops_status_with_postgresql_down_never_imports_temporal(tmp_path: Path) -> None:
    code, modules, err = run(tmp_path, "ops", "status",
                             DATABASE_URL=f"postgresql://nobody@127.0.0.1:{free_port()}/none")
    assert (code, err.strip()) == (Exit.UNREACHABLE, "tollgate: cannot reach PostgreSQL: start "
                                   "the stack with `tollgate dev` (or set DATABASE_URL)")
    assert TEMPORAL not in modules
    # The settings give the offline drafter's name as the default model, not the drafter.
    assert "adapters.models.offline" not in modules


def test_submit_of_a_missing_file_stops_before_importing_temporal(tmp_path: Path) -> None:
    code, modules, err = run(tmp_path, "submit", str(tmp_path / "nope.json"))
    assert (code, err.strip()) == (Exit.FILE, f"tollgate: {tmp_path / 'nope.json'}: no such file")
    assert TEMPORAL not in modules


def test_a_command_that_talks_to_temporal_leaves_the_metrics_exporter_unimported(
    tmp_path: Path,
) -> None:
    """A client's runtime comes from tollgate.observability.sdk_runtime: Tollgate's own
    /metrics (prometheus_client, the PostgreSQL gauges' queries) is a worker's, ≈ 0.15 s of
    a console script's start on the slow machine (docs/performance.md, "CLI start-up")."""
    code, modules, err = run(tmp_path, "ops", "state", "event/acme/k-1",
                             TEMPORAL_ADDRESS=f"127.0.0.1:{free_port()}",
                             TOLLGATE_CLI_TIMEOUT="2")
    assert code == Exit.UNREACHABLE, err
    assert {TEMPORAL, "tollgate.runtime.client"} <= modules  # it got as far as a client
    assert not {"prometheus_client", "tollgate.observability.metrics",
                "adapters.postgres.metrics"} & modules
    # Neither rich nor pygments (ADR 0068), nor httpx: the targets' queues need only the names
    # of their URL variables, not the adapters.
    assert not {RICH, "pygments", "httpx", "adapters.http.messaging"} & modules


def test_dev_token_imports_neither_the_stack_nor_the_http_service(tmp_path: Path) -> None:
    """The README walk runs `dev token` six times: it needs the dev key, not the stack's
    modules (tollgate.dev.stack) or FastAPI (tollgate.http), ≈ 0.5 s of its start before."""
    code, modules, err = run(tmp_path, "dev", "token", "--reviewer", "lan.nguyen",
                             "--role", "care_lead", "--tenant", "acme")
    assert code == Exit.OK, err
    assert not {"tollgate.dev.stack", "fastapi", "tollgate.http.identity", TEMPORAL} & modules


def test_starter_of_a_missing_file_stops_before_importing_temporal(tmp_path: Path) -> None:
    """`python starter.py` is `tollgate submit`: its API (``starter.submit`` …) is imported when
    asked for, not before the command line is read."""
    where, starter = tmp_path / "probe.json", str(ROOT / "starter.py")
    probe = ("import json, runpy, sys\n"
             "try:\n    runpy.run_path(sys.argv[2], run_name='__main__')\n"
             "except SystemExit as exc:\n    code = exc.code\n"
             "json.dump({'code': code, 'modules': sorted(sys.modules)}, open(sys.argv[1], 'w'))")
    done = subprocess.run([sys.executable, "-c", probe, str(where), starter,  # noqa: S603
                           str(tmp_path / "nope.json")], env=base_env(tmp_path), cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    found = json.loads(where.read_text(encoding="utf-8"))
    assert found["code"] == Exit.FILE, done.stderr
    assert not {TEMPORAL, RICH, "tollgate.intake.submit"} & set(found["modules"])

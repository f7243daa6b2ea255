"""`tollgate`: one command for every role; one module per command group.

Every command ends in one line on failure, with an exit code from ``tollgate.runtime.exits``
(``docs/cli.md``).
"""

from __future__ import annotations

import sys
from importlib.util import find_spec
from typing import Any

import click

from tollgate.cli.common import run
from tollgate.cli.lazy import LazyGroup
from tollgate.cli.output import closed_output, finish
from tollgate.runtime.exits import Exit

#: Every command: where it is, and its help up to the end of the first sentence, which is what
#: `tollgate --help` shows of it. A command's module is imported only when the command is named
#: (tollgate/cli/lazy.py says why); tests/cli/test_cli_startup.py holds this table to the
#: commands' own help.
COMMANDS: dict[str, tuple[str, str]] = {
    "submit": ("tollgate.cli.submit:submit", "Producer: submit the events in FILE..."),
    "review": ("tollgate.cli.review:review",
               "Reviewer: list the queue, show a record, decide."),
    "ops": ("tollgate.cli.ops:ops",
            "Operator: state, kill switches, dead letters, receipt sweep, rollout modes."),
    "trace": ("tollgate.cli.trace:trace",
              "The whole chain of EVENT (a workflow id event/TENANT/KEY, or an event id): "
              "envelope, intake, context fields, drafts, policy and gate, reviews, receipt, "
              "reconciliation, dead letters, and a Web UI link for each run."),
    "items": ("tollgate.cli:_items", "Content library: save, jobs, retry, untag."),
    "config": ("tollgate.cli.config:config",
               "The configuration this machine's environment gives (docs/config.md lists "
               "every variable)."),
    "serve": ("tollgate.cli.serve:serve",
              "The HTTP service (webhook intake, review API, inbox) and its outbox relay, "
              "until Ctrl-C (docs/api.md)."),
    "certify": ("tollgate.cli.certify:certify",
                "Run the fixture catalogue (shipped in the package, from docs/fixtures.md) and "
                "write the acceptance pack with its evidence; record the certification for "
                "`ops rollout`."),
}

#: The tools' commands, only where the tools are (a checkout, the editable install): the wheel
#: and the image leave their packages out, and there `tollgate --help` names none of them
#: (docs/adr/0023-tools-apart-from-what-ships.md).
TOOL_COMMANDS: dict[str, dict[str, tuple[str, str]]] = {
    "tollgate.dev": {
        "dev": ("tollgate.cli:_dev",
                "Start the embedded stack (Temporal dev server, PostgreSQL, stand-in targets) "
                "and a worker, until Ctrl-C."),
        "demo": ("tollgate.cli.dev:demo",
                 "Play the demo scenario end to end on a stack of its own and check every "
                 "outcome (exit 1 if any differs)."),
    },
    "tollgate.bench": {
        "bench": ("tollgate.cli.bench:bench",
                  "Benchmark the full pipeline against bare Temporal workflows of its shape "
                  "(same-shape, naive or both), on a dev stack of its own (minutes; "
                  "docs/performance.md)."),
    },
    "tollgate.chaos": {
        "chaos": ("tollgate.cli.chaos:chaos",
                  "Run EVENTS events on a stack of its own while a seeded schedule injects "
                  "faults (target 5xx, 429, delays, 504/502/drop after the write, slow lookups, "
                  "duplicate and out-of-order deliveries, racing reviewers, worker SIGKILL, "
                  "PostgreSQL and Temporal restarts), then check the invariants."),
    },
}


def _commands() -> dict[str, tuple[str, str]]:
    tools = {name: where for package, found in TOOL_COMMANDS.items()
             if find_spec(package) is not None for name, where in found.items()}
    return {**COMMANDS, **tools}


def _items() -> click.Command:
    from tollgate.cli.items import items

    if find_spec("tollgate.bench") is not None:
        from tollgate.cli.bench import bench_saves

        items.add_command(bench_saves)
    return items


def _dev() -> click.Command:
    from tollgate.cli.dev import dev
    from tollgate.cli.serve import token

    dev.add_command(token)
    return dev


def _version() -> str:
    # Read only when asked: importlib.metadata costs more than parsing the command line.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tollgate")
    except PackageNotFoundError:
        return "unknown"


def _show_version(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(f"tollgate, version {_version()}")
        ctx.exit()


@click.group(cls=LazyGroup, lazy=_commands(),
             context_settings={"help_option_names": ["-h", "--help"],
                               "show_default": True, "max_content_width": 100})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_show_version, help="Show the version and exit.")
def cli() -> None:
    """Tollgate: business events to AI-assisted actions that happen at most once, after a
    policy gate and a named human. Exit codes: docs/cli.md."""


@cli.result_callback()
def _run_work(result: Any) -> int:
    return run(result) if callable(result) else int(result or 0)


def main(argv: list[str] | None = None, prog_name: str = "tollgate") -> None:
    """The console script. Click's own errors (bad arguments) keep its one-line usage message
    and exit 2; every command returns its exit code."""
    import logging

    from tollgate.observability.logs import configure_logging

    args = sys.argv[1:] if argv is None else argv
    # Every command logs redacted JSON lines on stderr; `dev` runs the worker, whose INFO lines
    # matter, the others only say what went wrong.
    configure_logging(logging.INFO if args[:1] == ["dev"] else logging.WARNING)
    try:
        code = cli.main(args, prog_name=prog_name,
                        standalone_mode=False)
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
        code = Exit.USAGE
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else prog_name
        click.echo(f"{where}: {exc.format_message()} (`{where} --help` shows the usage)",
                   err=True)
        code = Exit.USAGE
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.Abort:
        click.echo("aborted", err=True)
        code = 130
    except BrokenPipeError:  # `tollgate --help | head -1`: the reader stopped, nothing failed
        code = closed_output()
    finish(int(code or 0))

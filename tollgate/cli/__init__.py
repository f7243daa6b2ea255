"""`tollgate`: one command for every role; one module per command group.

Every command ends in one line on failure, with an exit code from ``tollgate.runtime.exits``
(``docs/cli.md``).
"""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from typing import Any

import click

from tollgate.cli.certify import certify
from tollgate.cli.common import closed_output, finish, run
from tollgate.cli.config import config
from tollgate.cli.items import items
from tollgate.cli.ops import ops
from tollgate.cli.review import review
from tollgate.cli.serve import serve, token
from tollgate.cli.submit import submit
from tollgate.cli.trace import trace
from tollgate.runtime.exits import Exit


def _version() -> str:
    try:
        return version("tollgate")
    except PackageNotFoundError:
        return "unknown"


@click.group(context_settings={"help_option_names": ["-h", "--help"],
                               "show_default": True, "max_content_width": 100})
@click.version_option(_version(), "--version", prog_name="tollgate")
def cli() -> None:
    """Tollgate: business events to AI-assisted actions that happen at most once, after a
    policy gate and a named human. Exit codes: docs/cli.md."""


@cli.result_callback()
def _run_work(result: Any) -> int:
    return run(result) if callable(result) else int(result or 0)


for command in (submit, review, ops, trace, items, config, serve, certify):
    cli.add_command(command)


def _add_tool_commands() -> None:
    """The tools' commands, only where the tools are (a checkout, the editable install): the
    wheel and the image leave their packages out, and there `tollgate --help` names none of
    them (docs/adr/0023-tools-apart-from-what-ships.md)."""
    if find_spec("tollgate.dev") is not None:
        from tollgate.cli.dev import demo, dev

        dev.add_command(token)
        cli.add_command(dev)
        cli.add_command(demo)
    if find_spec("tollgate.bench") is not None:
        from tollgate.cli.bench import bench, bench_saves

        cli.add_command(bench)
        items.add_command(bench_saves)
    if find_spec("tollgate.chaos") is not None:
        from tollgate.cli.chaos import chaos

        cli.add_command(chaos)


_add_tool_commands()


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

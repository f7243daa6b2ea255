"""A command group that imports each command's module only when that command is named: Click's
documented lazy-loading pattern (click.palletsprojects.com, "Lazily Loading Subcommands").

Why: a command's module pulls what its work needs (the settings tree, the Temporal SDK,
asyncpg), and `tollgate --help`, a usage error or `tollgate submit` paid for all of them, for
every group, before doing anything. The group's help lists each command with the one-line help
from its table (``tests/cli/test_cli_startup.py`` holds the table to the commands' own help), so
listing them imports none.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click


class LazyGroup(click.Group):
    """``lazy`` maps a command's name to ``("module:attribute", "summary")``: the attribute is
    the command, or a function that returns it; the summary is its help up to the end of the
    first sentence, which is all Click's command list shows of it."""

    def __init__(self, *args: Any, lazy: Mapping[str, tuple[str, str]], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.load(cmd_name), cmd_name)
        return self.commands.get(cmd_name)

    def load(self, cmd_name: str) -> click.Command:
        """The command ``cmd_name``, imported now (without adding it to the group)."""
        module, _, attribute = self.lazy[cmd_name][0].partition(":")
        found = getattr(importlib.import_module(module), attribute)
        command = found if isinstance(found, click.Command) else found()
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.lazy[cmd_name][0]} is not a click command")
        return command

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.exceptions.NoSuchCommand as exc:
            # Click offers its "Did you mean" from the commands already loaded: offer every one.
            raise click.exceptions.NoSuchCommand(
                exc.command_name, possibilities=self.list_commands(ctx), ctx=ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's own list of commands, each not yet loaded shown from its summary."""
        rows: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            # Not loaded: a stand-in with the summary, shortened by Click's own rule.
            command = self.commands.get(name) or click.Command(name, help=self.lazy[name][1])
            if not command.hidden:
                rows.append((name, command))
        if not rows:
            return
        # Click's width for the help column: three times the default spacing.
        limit = formatter.width - 6 - max(len(name) for name, _ in rows)
        with formatter.section("Commands"):
            formatter.write_dl([(name, command.get_short_help_str(limit))
                                for name, command in rows])

"""`tollgate config show`: the effective configuration, by concern, secrets masked."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from tollgate.cli.common import Command, json_option
from tollgate.runtime.exits import Exit

if TYPE_CHECKING:
    from tollgate.config.settings import Settings


@click.group()
def config() -> None:
    """The configuration this machine's environment gives (docs/config.md lists every
    variable)."""


@config.command()
@json_option
def show(as_json: bool) -> Command:
    """Every variable's effective value, grouped by concern, with where it came from: env,
    running stack (the endpoints file of a running `tollgate dev`) or default. Secrets show as
    ********. A refused value ends in one line naming the variable (exit 7)."""

    async def go(s: Settings) -> int:
        from tollgate.config.tree import effective

        shown = effective(s)
        if as_json:
            click.echo(json.dumps(shown, indent=2))
            return Exit.OK
        width = max(len(row["variable"]) for rows in shown.values() for row in rows)
        for section, rows in shown.items():
            click.echo(f"[{section}]")
            for row in rows:
                origin = "" if row["source"] == "default" else f"  ({row['source']})"
                click.echo(f"  {row['variable']:<{width}}  {row['value'] or '-'}{origin}")
        return Exit.OK

    return go

"""`tollgate` imports a command's module only when that command is named (tollgate/cli/lazy.py).
Its help still lists every command as the command's own help would."""

from __future__ import annotations

import click
import pytest

from tollgate.cli import cli
from tollgate.cli.lazy import LazyGroup


def test_each_summary_is_what_its_command_s_own_help_shows() -> None:
    """The table in tollgate/cli/__init__.py, held to each command's docstring: at every width
    Click could give it, the summary shortens to the same words."""
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.load(name)
        assert not command.hidden, f"{name}: a hidden command has no row in the table"
        stand_in = click.Command(name, help=cli.lazy[name][1])
        for limit in range(10, 200):
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), name


@pytest.mark.parametrize("columns", ["60", "80", "200"])
def test_the_help_from_the_table_is_the_help_of_the_loaded_commands(
        monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    fresh = LazyGroup(name="tollgate", lazy=cli.lazy, params=cli.params, help=cli.help,
                      context_settings=cli.context_settings)
    from_table = fresh.get_help(click.Context(fresh, info_name="tollgate"))
    ctx = click.Context(cli, info_name="tollgate")
    for name in cli.list_commands(ctx):
        cli.get_command(ctx, name)
    assert set(cli.commands) == set(cli.lazy)
    assert from_table == cli.get_help(ctx)

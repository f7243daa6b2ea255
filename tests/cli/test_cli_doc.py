"""docs/cli.md says its table has every command: walk the Click tree and hold it to that, so a
new command cannot ship undocumented."""

from __future__ import annotations

import re
from collections.abc import Iterator

import click

from tests.cli.helpers import ROOT
from tollgate.cli import cli

DOC = ROOT / "docs" / "cli.md"


def commands(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[str]:
    """Every command a user can run, as typed after `tollgate` (a group that runs on its own,
    like `dev`, counts as one)."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):  # the root loads its commands when asked for them
        command = group.get_command(ctx, name)
        here = (*path, name)
        if command is None or command.hidden:
            continue
        if isinstance(command, click.Group):
            if command.invoke_without_command:
                yield " ".join(here)
            yield from commands(command, here)
        else:
            yield " ".join(here)


def documented() -> set[str]:
    """The commands the table's first column names: each code span's leading words, up to the
    first argument or option, with `a\\|b` alternatives expanded (`ops kill\\|reopen`)."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("| command | who | what |"):].split("\n\n", 1)[0]
    named: set[str] = set()
    for row in table.splitlines()[2:]:
        first_cell = re.split(r"(?<!\\)\|", row)[1]
        for span in re.findall(r"`([^`]+)`", first_cell):
            words: list[str] = []
            for word in span.split():
                if not re.fullmatch(r"[a-z][a-z-]*(\\\|[a-z][a-z-]*)*", word):
                    break
                words.append(word)
            *head, last = words
            named.update(" ".join([*head, alt]) for alt in last.split("\\|"))
    return named


def test_every_command_of_the_cli_is_in_the_table_of_docs_cli_md() -> None:
    missing = sorted(set(commands(cli)) - documented())
    assert not missing, f"docs/cli.md has no row for: {', '.join(missing)}"


def test_the_walk_sees_nested_and_standalone_groups() -> None:
    # The check above is only as good as the walk: it must reach a third level and `dev` itself.
    found = set(commands(cli))
    assert {"ops dlq replay", "dev", "dev token", "review request-info"} <= found
    assert {"ops dlq replay", "dev", "ops kill", "ops reopen"} <= documented()

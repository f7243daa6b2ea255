"""The click parameter types of every command's options and arguments, checked at the edge
(ADR 0032): text that reaches PostgreSQL or Temporal, row ids and counts that fit their
column, file names without a NUL."""

from __future__ import annotations

import os
from typing import Any

import click


class EdgeText(click.ParamType):
    """A command-line value that reaches PostgreSQL or Temporal: NUL, lone surrogates and
    control characters (any, in an id) are a usage error, exit 2, naming the option."""

    name = "text"

    def __init__(self, *, free_text: bool = True) -> None:
        self.free_text = free_text

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> str:
        from policies.edge_text import check_string

        text = str(value)
        bad = check_string(text, param.name if param and param.name else "value",
                           free_text=self.free_text, max_chars=4096)
        if bad is not None:
            self.fail(f"{bad.rule.replace('_', ' ')} refused", param, ctx)
        return text


#: Free text (a reason: tab and newline allowed) and ids (workflow ids, names).
TEXT = EdgeText()
ID_TEXT = EdgeText(free_text=False)
#: A row id (PostgreSQL bigserial) and a count kept in an ``int`` column: bounded here, so a
#: value past the column is a usage error (exit 2), not asyncpg's DataError (exit 9).
ROW_ID = click.IntRange(min=1, max=2**63 - 1)
COUNT = click.IntRange(min=1, max=2**31 - 1)


class EdgePath(click.Path):
    """A file a command reads or writes. No file name can hold a NUL, and the system call
    would raise ``ValueError`` (a traceback, not an answer): a usage error, exit 2, naming the
    argument. Other odd characters stay: a real file may carry them in its name."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        if "\x00" in os.fsdecode(value):
            self.fail("nul refused", param, ctx)
        return super().convert(value, param, ctx)

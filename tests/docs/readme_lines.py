"""The README's Quick start and four roles as commands: every fenced ``sh`` line and every ``$``
line of a ``console`` block, in order, each with the output the README shows beside it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Line:
    command: str
    #: The output the README shows: a console block's lines after the command, or an ``sh``
    #: block's ``# ...`` comment lines after it.
    shown: list[str] = field(default_factory=list)


def roles_section(text: str) -> str:
    """From the Quick start to the end of the four roles."""
    start = text.index("## Quick start")
    return text[start:text.index("\n## Two more domains", start)]


def readme_lines(text: str | None = None) -> list[Line]:
    body = roles_section(README.read_text() if text is None else text)
    lines: list[Line] = []
    kind: str | None = None
    pending = ""
    for raw in body.splitlines():
        fence = _FENCE.match(raw)
        if fence:
            kind = None if kind is not None else fence.group(1)
            continue
        if kind == "sh":
            if raw.startswith("# ") and lines:
                lines[-1].shown.append(raw[2:])
            elif raw.strip():
                pending += raw.rstrip()
                if pending.endswith("\\"):
                    pending = pending[:-1] + " "
                else:
                    lines.append(Line(pending))
                    pending = ""
        elif kind == "console":
            if raw.startswith("$ "):
                lines.append(Line(raw[2:].strip()))
            elif raw.strip() and lines:
                lines[-1].shown.append(raw.strip())
    return lines


def without_comment(command: str) -> str:
    """The command without its trailing ``  # ...`` remark."""
    return re.split(r"\s{2,}#\s", command, maxsplit=1)[0].strip()

"""Reading the producer's events: a file or standard input, split into events. Apart from
``tollgate.intake.submit``, which imports the Temporal SDK: `tollgate submit` reads (and refuses
a missing or unreadable file) before it connects, and pays for the SDK only then."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from policies import edge_text


def split_events(text: str) -> list[str]:
    """One event, an array of events, or JSON lines; text that parses as none is one event
    (it will be quarantined as malformed, not dropped). Text too deep to parse safely is one
    event too, refused as such by ``submit``. Text is JSON lines when one of its lines is a
    whole object by itself: an indented event with a syntax error has none, and is one
    malformed event rather than one per line."""
    data, violation = edge_text.parse_json(text, max_chars=max(len(text), 1))
    if violation is not None:
        if violation.rule != "not_json":
            return [text]
        lines = [line for line in text.splitlines() if line.strip()]
        return lines if len(lines) > 1 and any(map(_whole_object, lines)) else [text]
    if isinstance(data, list):
        return [json.dumps(item, ensure_ascii=False) for item in data]
    return [text]


def _whole_object(line: str) -> bool:
    found, violation = edge_text.parse_json(line, max_chars=len(line))
    return violation is None and isinstance(found, dict)


def read_source(path: str, stdin: Callable[[], str] | None = None) -> str:
    """The text of ``path``, or of standard input for ``-``. Raises ``OSError`` (missing,
    unreadable) or ``UnicodeDecodeError``; the CLI turns either into one line."""
    if path == "-":
        import sys

        return (stdin or sys.stdin.read)()
    return Path(path).read_text(encoding="utf-8")

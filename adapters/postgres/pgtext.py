"""Text and JSON that PostgreSQL will always store.

PostgreSQL ``text`` refuses NUL and ``jsonb`` refuses the escape ``\\u0000``; neither can hold a
lone surrogate (asyncpg cannot even encode one as UTF-8), and ``jsonb`` has no NaN or Infinity.
A hostile event carries any of them, and the row that records it (quarantine, outbox, dead
letter, refusal) must insert anyway: a row that cannot insert is retried without end and wedges
whatever waits behind it (issue 25). So every such value goes through here first.

What cannot be held is *escaped*, visibly and reversibly for a reader: NUL becomes the six
characters ``\\u0000``, a lone surrogate ``\\ud800`` likewise (in JSON, the backslash is then an
ordinary character of the string). Non-finite numbers become their names as strings; structure
deeper than ``MAX_DEPTH`` becomes a marker string, so a reader still sees that something was
there.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

#: JSON kept as structure down to this depth; below it a marker string (PostgreSQL's own parser
#: and Python's encoder both recurse, and neither should be what fails an insert).
MAX_DEPTH = 64

# NUL, and UTF-16 surrogate code points that Python lets into a str but UTF-8 cannot encode.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def pg_text(value: str) -> str:
    """``value`` with NUL and lone surrogates escaped, for a ``text`` column."""
    return _UNSTORABLE.sub(_escape, value)


def pg_text_or_none(value: str | None) -> str | None:
    return None if value is None else pg_text(value)


def pg_json_value(value: Any, depth: int = 0) -> Any:
    """``value`` (decoded JSON) rebuilt so that ``json.dumps`` of it is valid ``jsonb`` input."""
    if isinstance(value, str):
        return pg_text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if depth >= MAX_DEPTH:
        return f"<nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, dict):
        return {pg_text(str(k)): pg_json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [pg_json_value(v, depth + 1) for v in value]
    return pg_text(str(value))


def pg_json(value: Any) -> str | None:
    """``value`` as text for a ``$n::jsonb`` parameter, or None for SQL NULL."""
    return None if value is None else json.dumps(pg_json_value(value), allow_nan=False)

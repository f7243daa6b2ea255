"""Text checked at every edge, before it is parsed deeper, stored or sent on (ADR 0032).

PostgreSQL text refuses NUL, UTF-8 (so asyncpg and every log line) refuses lone surrogates,
``json.loads`` recurses once per nesting level, and a control character in an id ends up in a
workflow id or a query. Each edge (HTTP, CLI, starter, broker, forms) asks this module first and
answers the producer with the ``Violation`` it returns: the field as a JSON path and the rule.

Pure: no I/O, callable from an activity or a workflow.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

#: Deepest nesting a JSON document may have; an event envelope needs 3 or 4.
MAX_DEPTH = 32
#: Longest string value or key, in characters.
MAX_STRING_CHARS = 16384
#: Largest integer (PostgreSQL bigint); floats must be finite and within this magnitude too.
MAX_INT = 2**63 - 1
_MAX_INT_DIGITS = len(str(MAX_INT))

#: Rules, as the ``rule`` of a violation (docs/api.md lists each).
RULES = ("not_json", "too_deep", "too_large", "nul", "lone_surrogate", "control_character",
         "number_too_large", "string_too_long", "duplicate_key", "byte_order_mark")
#: U+FEFF before the text: the UTF-8 byte order mark some Windows tools write. RFC 8259 lets a
#: parser refuse it and every edge does, by name: skipping it would read other bytes than the
#: ones signed, and "not valid JSON" sent producers looking for a syntax error.
BYTE_ORDER_MARK = "\ufeff"

_NUL = "\x00"
_SURROGATE = re.compile("[\ud800-\udfff]")
#: C0 and C1 controls and DEL; free text may keep tab, newline and carriage return.
_CONTROL_IN_TEXT = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROL_IN_ID = re.compile("[\x01-\x1f\x7f-\x9f]")
#: A JSON string (skipped whole) or one bracket; used to measure depth without recursion.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)


@dataclass(frozen=True)
class Violation:
    """Which field (a JSON path, ``$`` for the whole document) broke which rule."""

    field: str
    rule: str

    @property
    def message(self) -> str:
        return f"{self.field}: {_WHY[self.rule]}"


_WHY = {
    "not_json": "not valid JSON (NaN and Infinity are not JSON)",
    "too_deep": f"nested deeper than {MAX_DEPTH} levels",
    "too_large": "over the size limit",
    "nul": "contains a NUL character",
    "lone_surrogate": "contains a lone UTF-16 surrogate (not a character)",
    "control_character": "contains a control character",
    "number_too_large": f"a number beyond ±{MAX_INT} or not finite",
    "string_too_long": f"a string over {MAX_STRING_CHARS} characters",
    "duplicate_key": "a key held twice in one object (a parser keeps one of its values, "
                     "which one depends on the parser)",
    "byte_order_mark": "starts with a byte order mark (U+FEFF); send UTF-8 without it",
}
#: A key an answer may repeat when it names a key the sender made up: a plain name.
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


def check_string(value: str, field: str, *, free_text: bool = True,
                 max_chars: int = MAX_STRING_CHARS) -> Violation | None:
    """The first rule ``value`` breaks. Ids (``free_text=False``) may hold no control
    character at all; free text may hold tab and line breaks."""
    if len(value) > max_chars:
        return Violation(field, "string_too_long")
    if _NUL in value:
        return Violation(field, "nul")
    if _SURROGATE.search(value):
        return Violation(field, "lone_surrogate")
    if (_CONTROL_IN_TEXT if free_text else _CONTROL_IN_ID).search(value):
        return Violation(field, "control_character")
    return None


def depth_of(text: str) -> int:
    """The deepest bracket nesting of ``text``, counted without parsing it (no recursion)."""
    depth = deepest = 0
    for token in _TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif mark in "]}":
            depth -= 1
    return deepest


class _NotJson(float):
    """``NaN``/``Infinity``: Python reads them, JSON and PostgreSQL do not. Kept as a marker so
    the walk names the field (and a batch's other events are still read)."""


def _constant(name: str) -> float:
    return _NotJson(name)


def _int(digits: str) -> int | float:
    # Never int() a long run of digits (Python refuses past 4,300 anyway): too large is +inf,
    # which the walk names.
    if len(digits.lstrip("-")) > _MAX_INT_DIGITS or abs(int(digits)) > MAX_INT:
        return math.inf
    return int(digits)


def load_json(text: str, *, max_chars: int, max_depth: int = MAX_DEPTH
              ) -> tuple[Any, Violation | None]:
    """``text`` parsed, once it is known small and shallow enough to parse safely, then every
    key and string checked. Returns ``(value, None)`` or ``(None, violation)``."""
    if _NUL in text and len(text) <= max_chars:  # a raw NUL is never valid JSON; say so
        return None, Violation("$", "nul")
    value, violation = parse_json(text, max_chars=max_chars, max_depth=max_depth)
    if violation is not None:
        return None, violation
    found = check_value(value)
    return (None, found) if found else (value, None)


def parse_json(text: str, *, max_chars: int, max_depth: int = MAX_DEPTH
               ) -> tuple[Any, Violation | None]:
    """``text`` parsed with the size, depth, number and duplicate-key rules only (strings
    unchecked: a batch is split first, then each event is checked on its own). A key held
    twice refuses the whole text, as too deep does: splitting it would keep one value."""
    if len(text) > max_chars:
        return None, Violation("$", "too_large")
    if depth_of(text) > max_depth:
        return None, Violation("$", "too_deep")
    if text.startswith(BYTE_ORDER_MARK):
        return None, Violation("$", "byte_order_mark")
    objects = _Objects()
    try:
        value = json.loads(text, parse_constant=_constant, parse_int=_int,
                           object_pairs_hook=objects.made)
    except (ValueError, RecursionError):
        return None, Violation("$", "not_json")
    if objects.twice:
        return None, Violation(_twice_at(value), "duplicate_key")
    return value, None


def why_not_json(text: str) -> str:
    """Why ``text``, which ``json.loads`` refused, is not JSON, as words after "the event"."""
    return _WHY["byte_order_mark"] if text.startswith(BYTE_ORDER_MARK) else "is not valid JSON"


def loads_keeping_keys(text: str) -> tuple[Any, Violation | None]:
    """``json.loads(text)`` (raising as it does) and the first key an object of it holds
    twice, or None: one parse for a reader that must refuse what the edges refuse."""
    objects = _Objects()
    value = json.loads(text, object_pairs_hook=objects.made)
    return value, Violation(_twice_at(value), "duplicate_key") if objects.twice else None


def plain_key(key: object) -> str:
    """A key the sender made up, as an answer may repeat it: a plain name of at most 64
    characters, else ``?`` (never a control character, an escape or a long text)."""
    return key if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) else "?"


class _Twice(dict[str, Any]):
    """An object as read that held ``key`` twice (``json.loads`` keeps its last value)."""

    key = ""


class _Objects:
    """``json.loads``'s ``object_pairs_hook``: objects as it would build them, the one
    holding a key twice marked (rare, so the walk naming it runs only then)."""

    def __init__(self) -> None:
        self.twice = False

    def made(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        made = dict(pairs)
        if len(made) == len(pairs):
            return made
        self.twice = True
        marked = _Twice(made)
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                marked.key = key
                break
            seen.add(key)
        return marked


def _twice_at(value: Any) -> str:
    """The JSON path of the first key held twice (walked without recursion)."""
    stack: list[tuple[str, Any]] = [("$", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, _Twice):
            return f"{path}.{plain_key(item.key)}"
        if isinstance(item, dict):
            stack.extend((f"{path}.{plain_key(k)}", v) for k, v in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return "$"


def check_value(value: Any, root: str = "$") -> Violation | None:
    """The first violation inside an already parsed JSON value (walked without recursion).
    Keys are checked as ids; string values as free text."""
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            found = check_string(item, path)
        elif isinstance(item, bool) or item is None:
            found = None
        elif isinstance(item, int):
            found = Violation(path, "number_too_large") if abs(item) > MAX_INT else None
        elif isinstance(item, _NotJson):
            found = Violation(path, "not_json")
        elif isinstance(item, float):
            ok = math.isfinite(item) and abs(item) <= MAX_INT
            found = None if ok else Violation(path, "number_too_large")
        elif isinstance(item, dict):
            found = None
            for key, inner in reversed(list(item.items())):
                where = f"{path}.{_safe(key)}"
                found = found or check_string(str(key), where, free_text=False)
                stack.append((where, inner))
        elif isinstance(item, list):
            found = None
            stack.extend((f"{path}[{i}]", inner) for i, inner in reversed(list(enumerate(item))))
        else:
            found = Violation(path, "not_json")
        if found:
            return found
    return None


def _safe(key: Any) -> str:
    """A key as it may appear in an answer: printable, short, never the offending characters."""
    text = str(key)[:64]
    clean = _SURROGATE.sub("?", _CONTROL_IN_ID.sub("?", text.replace(_NUL, "?")))
    return clean if clean.isidentifier() else json.dumps(clean, ensure_ascii=True)

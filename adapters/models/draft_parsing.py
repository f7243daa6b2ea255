"""Tolerant parsing, strict meaning: whatever a model or gateway returned -> a ``Draft`` or a
classified exception. "The model said nothing" and "we could not read what it said" are never
the same outcome.

Shapes read: the object itself; the object under a wrapper key (``draft``, ``result``,
``output``, ``data``, ...) or a one-key wrapper, also when double-encoded as a JSON string; a
one-element array around it; JSON inside a ```json fence or surrounded by prose; camelCase keys.
Tags have a reader of their own: ``tag_parsing.py``.

``parse_answer`` and ``find_answer`` are the steps every answer shape shares (drafts here, triage
and postmortems in their own modules): find the JSON, find the answer object in it by its keys
under the usual wrappers, refuse tool calls and refusals, validate against the contract. The
outcomes are those of ``adapters.models.answer_errors``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

# The outcomes are re-exported: activities and tests know them as the draft parser's.
from adapters.models.answer_errors import DraftSchemaError as DraftSchemaError
from adapters.models.answer_errors import ModelRefused as ModelRefused
from adapters.models.answer_errors import ToolCallInOutput as ToolCallInOutput
from adapters.models.answer_errors import UnreadableOutput as UnreadableOutput
from contracts import Draft

_WRAPPERS = ("draft", "result", "output", "data", "response", "answer", "content", "json")
_TOOL_KEYS = frozenset({"tool_calls", "tool_call", "function_call", "tool_use", "tool", "function"})
_TOOL_TYPES = frozenset({"tool_use", "tool_call", "function", "function_call"})
_FENCE = re.compile(r"```[A-Za-z]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_REFUSAL = re.compile(
    r"^\W*(?:i'?m sorry|sorry,|i (?:can(?:no|')t|am unable|won'?t)|as an ai|"
    r"i must decline|unfortunately,? i)",
    re.IGNORECASE,
)
_JSON_START = re.compile(r'[{\[]\s*(?:["{\[\]}]|\Z)')
_SAFE_KEY = re.compile(r"[a-z][a-z0-9_]{0,40}")
_MAX_DEPTH = 4
_MAX_OPENERS = 40  # bounds the work a long answer full of braces can cost


def parse_draft(raw: str) -> Draft:
    """Read one draft out of a model's answer text.

    Raises:
        UnreadableOutput: empty body, truncated JSON, or nothing that looks like a draft.
        ModelRefused: a refusal in prose or a ``refusal`` field.
        ToolCallInOutput: a tool/function call where the draft should be.
        DraftSchemaError: a draft object that breaks the contract.
    """
    return parse_answer(raw, _DRAFT, Draft, _normalise)


@dataclass(frozen=True)
class AnswerShape:
    """How to recognise one kind of answer object inside whatever JSON came back."""

    keys: frozenset[str]  # snake_case keys that mark the answer object itself
    wrappers: tuple[str, ...] = _WRAPPERS  # keys it may sit under (a one-key wrapper always)
    strings: bool = False  # a JSON string may hold it (double-encoded)
    lists: bool = True  # a one-element array may hold it


_DRAFT = AnswerShape(frozenset({"message"}), strings=True)
A = TypeVar("A", bound=BaseModel)


def parse_answer(raw: str, shape: AnswerShape, contract: type[A],
                 normalise: Callable[[dict[str, Any]], dict[str, Any]]) -> A:
    """The first answer of ``shape`` in ``raw``, normalised and validated as ``contract``
    (raises as ``parse_draft``; a contract break is a ``DraftSchemaError`` for every shape)."""
    for value in _json_values(raw):
        found = find_answer(value, raw, shape, 0)
        if found is not None:
            break
    else:
        raise UnreadableOutput("unreadable_output", raw=raw)
    try:
        return contract.model_validate(normalise(found))
    except ValidationError as exc:
        raise DraftSchemaError(_findings(exc), raw=raw) from None


def _json_values(raw: str) -> Iterator[Any]:
    """Every JSON value in ``raw``, in order: the whole text, else fenced blocks, else values
    inside prose. Raises when there is none: empty, truncated, a refusal, or unreadable."""
    text = raw.strip()
    if not text:
        raise UnreadableOutput("empty_output", raw=raw)
    try:
        whole = json.loads(text)
    except ValueError:
        pass
    else:
        yield whole
        return
    found, truncated, resume = 0, False, 0
    for block in _FENCE.findall(text):
        try:
            value = json.loads(block)
        except ValueError:
            continue
        found += 1
        yield value
    for start in [m.start() for m in re.finditer(r"[{\[]", text)][:_MAX_OPENERS]:
        if start < resume:
            continue  # inside a value already read
        end = _balanced_end(text, start)
        if end is None:
            if _JSON_START.match(text, start):
                truncated = True  # JSON that stops mid-way; later openers sit inside it
                break
            continue  # a stray bracket in prose
        try:
            value = json.loads(text[start:end])
        except ValueError:
            continue
        found, resume = found + 1, end
        yield value
    if found:
        return
    if truncated:
        raise UnreadableOutput("truncated_output", raw=raw)
    if _REFUSAL.search(text):
        raise ModelRefused(raw=raw)
    raise UnreadableOutput("unreadable_output", raw=raw)


def _balanced_end(text: str, start: int) -> int | None:
    """Index after the bracket closing ``text[start]``, string-aware; None if it never closes."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def find_answer(value: Any, raw: str, shape: AnswerShape, depth: int) -> dict[str, Any] | None:
    """The answer object in ``value``, or None; a tool call or a refusal on the way raises."""
    if depth > _MAX_DEPTH:
        return None
    if shape.strings and isinstance(value, str):
        try:
            return find_answer(json.loads(value), raw, shape, depth + 1)
        except ValueError:
            return None
    if shape.lists and isinstance(value, list):
        return find_answer(value[0], raw, shape, depth + 1) if len(value) == 1 else None
    if not isinstance(value, dict):
        return None
    keys = {_snake(str(k)) for k in value}
    kind = value.get("type")
    if keys & _TOOL_KEYS or (isinstance(kind, str) and kind in _TOOL_TYPES):
        raise ToolCallInOutput(raw=raw)
    if shape.keys <= keys:
        return value
    refusal = value.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ModelRefused(raw=raw)
    inner = [value[k] for k in value if _snake(str(k)) in shape.wrappers]
    if not inner and len(value) == 1:
        inner = list(value.values())
    for candidate in inner:
        found = find_answer(candidate, raw, shape, depth + 1)
        if found is not None:
            return found
    return None


def _normalise(obj: dict[str, Any]) -> dict[str, Any]:
    """camelCase -> snake_case; null lists and reason -> empty; a lone ref -> a list. A confidence
    that is not a number in [0, 1] is recorded as unknown: it changes no state, so it is not
    worth failing a draft over."""
    out = {_snake(str(k)): v for k, v in obj.items()}
    for key in ("source_refs", "unknowns"):
        if out.get(key, []) is None:
            out[key] = []
        elif isinstance(out.get(key), str):
            out[key] = [out[key]]
    if out.get("reason", "") is None:
        out["reason"] = ""
    if out.get("confidence") is not None:
        out["confidence"] = unit_confidence(out["confidence"])
    return out


def unit_confidence(value: Any) -> float | None:
    """A confidence as a number in [0, 1], else None (unknown)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if 0.0 <= number <= 1.0 else None


def _snake(key: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", key).lower()


def _findings(exc: ValidationError) -> list[str]:
    findings = []
    for error in exc.errors():
        # Field names come from the model: keep only ones that look like identifiers.
        loc = ".".join(
            str(p) if isinstance(p, int) or _SAFE_KEY.fullmatch(p) else "_"
            for p in error["loc"][:2]
        )
        findings.append(f"schema_invalid:{loc or '_'}:{error['type']}")
    return sorted(set(findings))

"""Tolerant parsing of a postmortem answer into a ``Postmortem`` (ADR 0046), with the draft
parser's outcomes: ``UnreadableOutput`` (empty, truncated, nothing postmortem-shaped),
``ModelRefused``, ``ToolCallInOutput`` and ``DraftSchemaError`` (readable, breaks the contract).

Shapes read, beyond the draft parser's wrappers, fences and prose: camelCase section names
(``suspectedCause``), a sentence given as a bare string (then it cites nothing, and the
validator says so), a ref list given as one string. Whether the sentences rest on the packet is
the validator's question (``policies/postmortem.py``), not the parser's.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from adapters.models.draft_parsing import (
    _MAX_DEPTH,
    _TOOL_KEYS,
    _TOOL_TYPES,
    _WRAPPERS,
    DraftSchemaError,
    ModelRefused,
    ToolCallInOutput,
    UnreadableOutput,
    _findings,
    _json_values,
    _snake,
)
from contracts.incident import SECTIONS, Postmortem


def parse_postmortem(raw: str) -> Postmortem:
    """Read one postmortem out of a model's answer text (raises as ``parse_draft``)."""
    for value in _json_values(raw):
        found = _find(value, raw, 0)
        if found is not None:
            break
    else:
        raise UnreadableOutput("unreadable_output", raw=raw)
    try:
        return Postmortem.model_validate(_normalise(found))
    except ValidationError as exc:
        raise DraftSchemaError(_findings(exc), raw=raw) from None


def _find(value: Any, raw: str, depth: int) -> dict[str, Any] | None:
    if depth > _MAX_DEPTH or not isinstance(value, dict):
        return None
    keys = {_snake(str(k)) for k in value}
    kind = value.get("type")
    if keys & _TOOL_KEYS or (isinstance(kind, str) and kind in _TOOL_TYPES):
        raise ToolCallInOutput(raw=raw)
    if {"impact", "timeline"} <= keys:
        return value
    refusal = value.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ModelRefused(raw=raw)
    inner = [value[k] for k in value if _snake(str(k)) in (*_WRAPPERS, "postmortem")]
    if not inner and len(value) == 1:
        inner = list(value.values())
    for candidate in inner:
        found = _find(candidate, raw, depth + 1)
        if found is not None:
            return found
    return None


def _sentence(value: Any) -> Any:
    if isinstance(value, str):
        return {"text": value, "refs": []}
    if isinstance(value, dict):
        refs = value.get("refs")
        return {**value, "refs": [refs] if isinstance(refs, str) else (refs or [])}
    return value


def _normalise(obj: dict[str, Any]) -> dict[str, Any]:
    out = {_snake(str(k)): v for k, v in obj.items()}
    for section in SECTIONS:
        items = out.get(section)
        out[section] = [_sentence(s) for s in items] if isinstance(items, list) else (
            [] if items is None else items)
    return out

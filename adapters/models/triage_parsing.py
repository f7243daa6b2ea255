"""Tolerant parsing of a triage answer into a ``TriageProposal`` (ADR 0044), with the draft
parser's outcomes: ``UnreadableOutput`` (empty, truncated, nothing triage-shaped),
``ModelRefused``, ``ToolCallInOutput`` and ``DraftSchemaError`` (readable, breaks the contract).

Shapes read, beyond the draft parser's wrappers, fences and prose: camelCase keys at any depth,
an intent or route given as a bare string (then it cites nothing, and the validator says so),
a null list as empty, a confidence that is not a number in [0, 1] as unknown.
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
from contracts.triage import TriageProposal

_CLAIMS = ("intent", "route")
_LISTS = ("conflicts", "missing")


def parse_triage(raw: str) -> TriageProposal:
    """Read one triage proposal out of a model's answer text (raises as ``parse_draft``)."""
    for value in _json_values(raw):
        found = _find(value, raw, 0)
        if found is not None:
            break
    else:
        raise UnreadableOutput("unreadable_output", raw=raw)
    try:
        return TriageProposal.model_validate(_normalise(found))
    except ValidationError as exc:
        raise DraftSchemaError(_findings(exc), raw=raw) from None


def _find(value: Any, raw: str, depth: int) -> dict[str, Any] | None:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, list):
        return _find(value[0], raw, depth + 1) if len(value) == 1 else None
    if not isinstance(value, dict):
        return None
    keys = {_snake(str(k)) for k in value}
    kind = value.get("type")
    if keys & _TOOL_KEYS or (isinstance(kind, str) and kind in _TOOL_TYPES):
        raise ToolCallInOutput(raw=raw)
    if {"intent", "route"} <= keys:
        return value
    refusal = value.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        raise ModelRefused(raw=raw)
    inner = [value[k] for k in value if _snake(str(k)) in (*_WRAPPERS, "triage")]
    if not inner and len(value) == 1:
        inner = list(value.values())
    for candidate in inner:
        found = _find(candidate, raw, depth + 1)
        if found is not None:
            return found
    return None


def _normalise(obj: dict[str, Any]) -> dict[str, Any]:
    out = _snake_keys(obj)
    for key in _CLAIMS:
        if isinstance(out.get(key), str):
            out[key] = {"value": out[key]}
    for key in _LISTS:
        if out.get(key) is None:
            out[key] = []
    for item in (out.get("intent"), out.get("route"), out.get("reply"),
                 *(out.get("conflicts") or []), *(out.get("missing") or [])):
        if isinstance(item, dict):
            refs = item.get("source_refs")
            item["source_refs"] = [refs] if isinstance(refs, str) else (refs or [])
    if out.get("reason") is None:
        out["reason"] = ""
    if isinstance(out.get("reply"), str):
        out["reply"] = {"message": out["reply"]} if out["reply"].strip() else None
    conf = out.get("confidence")
    if conf is not None:
        try:
            number = float(conf)
        except (TypeError, ValueError):
            number = -1.0
        out["confidence"] = number if 0.0 <= number <= 1.0 else None
    return out


def _snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_snake(str(k)): _snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value

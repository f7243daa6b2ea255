"""Tolerant parsing of a triage answer into a ``TriageProposal`` (ADR 0044), with the draft
parser's outcomes: ``UnreadableOutput`` (empty, truncated, nothing triage-shaped),
``ModelRefused``, ``ToolCallInOutput`` and ``DraftSchemaError`` (readable, breaks the contract).

Shapes read, beyond the draft parser's wrappers, fences and prose: camelCase keys at any depth,
an intent or route given as a bare string (then it cites nothing, and the validator says so),
a null list as empty, a confidence that is not a number in [0, 1] as unknown.
"""

from __future__ import annotations

from typing import Any

from adapters.models.draft_parsing import (
    _WRAPPERS,
    AnswerShape,
    _snake,
    parse_answer,
    unit_confidence,
)
from contracts.triage import TriageProposal

_TRIAGE = AnswerShape(frozenset({"intent", "route"}), wrappers=(*_WRAPPERS, "triage"))
_CLAIMS = ("intent", "route")
_LISTS = ("conflicts", "missing")


def parse_triage(raw: str) -> TriageProposal:
    """Read one triage proposal out of a model's answer text (raises as ``parse_draft``)."""
    return parse_answer(raw, _TRIAGE, TriageProposal, _normalise)


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
    if out.get("confidence") is not None:
        out["confidence"] = unit_confidence(out["confidence"])
    return out


def _snake_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {_snake(str(k)): _snake_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value

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

from adapters.models.draft_parsing import _WRAPPERS, AnswerShape, _snake, parse_answer
from contracts.incident import SECTIONS, Postmortem

# Read from an object only: a one-element array around it is not unwrapped.
_POSTMORTEM = AnswerShape(frozenset({"impact", "timeline"}), wrappers=(*_WRAPPERS, "postmortem"),
                          lists=False)


def parse_postmortem(raw: str) -> Postmortem:
    """Read one postmortem out of a model's answer text (raises as ``parse_draft``)."""
    return parse_answer(raw, _POSTMORTEM, Postmortem, _normalise)


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

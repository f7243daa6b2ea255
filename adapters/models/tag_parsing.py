"""Tolerant reading of a model's tag answer, strict about what it cannot read.

Four shapes come back from real models and are all read:

    {"tags": [{"tag": "ui design", "confidence": 0.9}]}   objects with ``tag``
    [{"label": "ui design", "score": 0.9}]                objects with ``label``
    ["ui design", "figma"]                                a bare array of strings
    {"tags": ["ui design", "figma"], "confidence": [0.9, 0.4]}   strings + a confidence array

(each either bare or under ``tags``/``labels``, possibly inside a Markdown fence or prose).
An answer with no list of tags in it (``{}``, prose, ``{"tags": "x"}``) raises
``UnreadableTags``, a retryable error: "the model said nothing" and "we could not read what it
said" are different, and only the first is an empty success. More than ``MAX_TAGS`` are cut by
confidence; a missing or unusable confidence is ``DEFAULT_CONFIDENCE``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from contracts.errors import RetryableError
from contracts.tagging import DEFAULT_CONFIDENCE, MAX_TAGS, TagSuggestion

_LIST_KEYS = ("tags", "labels", "suggestions", "items")
_NAME_KEYS = ("tag", "label", "name")
_SCORE_KEYS = ("confidence", "score", "probability")
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class UnreadableTags(RetryableError):
    """The answer holds no list of tags we can read; retried, never recorded as empty."""

    def __init__(self, code: str = "unreadable_tags") -> None:
        super().__init__(code, "the model's tag answer could not be read")


_FAILURES = {"tool_call": "tool_call_in_output", "model_refused": "model_refused",
             "truncated_output": "truncated_output"}


def tag_failure(code: str, raw: str) -> Exception:
    """A vendor adapter's non-answer (``adapters.models.draft_parsing.Failure``) for tags: all
    retried; the raw text stays out (the tag answer is read in the activity, not here)."""
    return UnreadableTags(_FAILURES.get(code, "unreadable_output"))


def parse_tag_answer(raw: str) -> list[TagSuggestion]:
    """Read ``raw`` into at most ``MAX_TAGS`` suggestions, highest confidence first."""
    value = _first_json(raw)
    found = _suggestions(value)
    if found is None:
        raise UnreadableTags()
    found.sort(key=lambda s: -s.confidence)  # stable: equal confidences keep the model's order
    return found[:MAX_TAGS]


def _first_json(raw: str) -> Any:
    fenced = _FENCE.search(raw)
    text = fenced.group(1) if fenced else raw
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                return decoder.raw_decode(text, i)[0]
            except json.JSONDecodeError:
                continue
    raise UnreadableTags("not_json")


def _suggestions(value: Any) -> list[TagSuggestion] | None:
    scores: Any = None
    if isinstance(value, dict):
        listed = next((value[k] for k in _LIST_KEYS if k in value), None)
        scores = next((value[k] for k in (*_SCORE_KEYS, "confidences", "scores")
                       if isinstance(value.get(k), list)), None)
        value = listed
    if not isinstance(value, list):
        return None
    out: list[TagSuggestion] = []
    for i, entry in enumerate(value):
        name, score = _entry(entry)
        if name is None:
            return None  # one unreadable entry means we misread the shape: do not half-accept
        if score is None and isinstance(scores, list) and i < len(scores):
            score = _score(scores[i])
        if name.strip():
            out.append(TagSuggestion(tag=name.strip()[:80],
                                     confidence=DEFAULT_CONFIDENCE if score is None else score))
    return out


def _entry(entry: Any) -> tuple[str | None, float | None]:
    if isinstance(entry, str):
        return entry, None
    if isinstance(entry, dict):
        name = next((entry[k] for k in _NAME_KEYS if isinstance(entry.get(k), str)), None)
        score = next((_score(entry[k]) for k in _SCORE_KEYS if k in entry), None)
        return name, score
    return None, None


def _score(value: Any) -> float | None:
    """A confidence in [0, 1]; percentages (1 < x <= 100) are scaled; anything else is None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    if 1 < value <= 100:
        value = value / 100
    return float(value) if 0 <= value <= 1 else None

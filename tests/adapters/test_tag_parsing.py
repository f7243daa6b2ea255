"""The four answer shapes are read; unreadable raises (and is retried); empty is valid."""

from __future__ import annotations

import pytest

from adapters.models.tag_parsing import UnreadableTags, parse_tag_answer
from contracts.errors import RetryableError


def pairs(raw: str) -> list[tuple[str, float]]:
    return [(s.tag, s.confidence) for s in parse_tag_answer(raw)]


@pytest.mark.parametrize("raw", [
    '{"tags": [{"tag": "figma", "confidence": 0.9}, {"tag": "ui design", "confidence": 0.7}]}',
    '[{"label": "figma", "score": 0.9}, {"label": "ui design", "score": 0.7}]',
    '{"tags": ["figma", "ui design"], "confidence": [0.9, 0.7]}',
    'Sure! ```json\n{"labels": [{"label": "figma", "confidence": 90}, '
    '{"label": "ui design", "confidence": 70}]}\n```',
])
def test_each_shape_gives_the_same_tags(raw: str) -> None:
    assert pairs(raw) == [("figma", 0.9), ("ui design", 0.7)]


def test_a_bare_array_gets_the_confidence_floor() -> None:
    assert pairs('["figma", "ui design"]') == [("figma", 0.45), ("ui design", 0.45)]


@pytest.mark.parametrize("raw", ["{}", "no tags today", '{"tags": "figma"}',
                                 '[{"confidence": 0.4}]', "[1, 2]"])
def test_unreadable_raises_a_retryable_error(raw: str) -> None:
    with pytest.raises(UnreadableTags) as caught:
        parse_tag_answer(raw)
    assert isinstance(caught.value, RetryableError)


@pytest.mark.parametrize("raw", ["[]", '{"tags": []}'])
def test_a_readable_empty_list_is_a_result(raw: str) -> None:
    assert parse_tag_answer(raw) == []


def test_more_than_five_are_cut_by_confidence() -> None:
    raw = '{"tags": ["a", "b", "c", "d", "e", "f", "g"], "confidence": [0.1, 0.9, 0.2, 0.8, 0.3]}'
    assert [t for t, _ in pairs(raw)] == ["b", "d", "f", "g", "e"]  # f, g at the 0.45 floor

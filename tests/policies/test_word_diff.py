"""The word diff a reviewer reads between two draft versions."""

from __future__ import annotations

from policies.word_diff import Piece, as_text, changed, word_diff

OLD = "Hi Lan, Miu's vaccination is due on 3 May 2026. Reply to book a visit."
NEW = "Hi Lan, Miu's vaccination at Happy Paws is due on 3 May 2026. Reply to book a visit."


def test_an_inserted_phrase_is_the_only_change() -> None:
    pieces = word_diff(OLD, NEW)
    assert [p for p in pieces if p.op != "same"] == [Piece("added", "at Happy Paws ")]
    assert "".join(p.text for p in pieces if p.op != "removed") == NEW


def test_a_replaced_word_shows_removed_then_added() -> None:
    pieces = word_diff("due on 3 May", "due on 5 May")
    assert pieces == [Piece("same", "due on "), Piece("removed", "3 "), Piece("added", "5 "),
                      Piece("same", "May")]
    assert as_text(pieces) == "due on [-3 -]{+5 +}May"


def test_the_same_text_has_no_change() -> None:
    assert not changed(word_diff(OLD, OLD))
    assert changed(word_diff(OLD, NEW))
    assert word_diff("", "") == []

"""What changed between two draft versions, word by word. Pure.

A reviewer who asked for information checks the new version against the old one: the diff
keeps whitespace with the word before it, so joining the kept and added pieces gives the new
version back exactly, and each surface (inbox, API, CLI) only decides how to mark the pieces.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal, NamedTuple

_WORD = re.compile(r"\S+\s*|\s+")


class Piece(NamedTuple):
    op: Literal["same", "removed", "added"]
    text: str


def word_diff(old: str, new: str) -> list[Piece]:
    """The pieces of ``old`` and ``new`` in reading order; a changed run shows its removed words
    before the added ones, and neighbouring pieces of one kind are merged."""
    a, b = _WORD.findall(old), _WORD.findall(new)
    # Words are compared without their trailing space, so "due." vs "due. " still matches.
    matcher = difflib.SequenceMatcher(None, [w.strip() for w in a], [w.strip() for w in b],
                                      autojunk=False)
    pieces: list[Piece] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            _add(pieces, "same", "".join(b[j1:j2]))
            continue
        _add(pieces, "removed", "".join(a[i1:i2]))
        _add(pieces, "added", "".join(b[j1:j2]))
    return pieces


def changed(pieces: list[Piece]) -> bool:
    return any(p.op != "same" for p in pieces)


def as_text(pieces: list[Piece]) -> str:
    """The diff for a terminal or a log-free text surface: ``[-removed-]{+added+}``, as
    ``git diff --word-diff`` writes it."""
    marks = {"same": "{}", "removed": "[-{}-]", "added": "{{+{}+}}"}
    return "".join(marks[p.op].format(p.text) for p in pieces)


def _add(pieces: list[Piece], op: Literal["same", "removed", "added"], text: str) -> None:
    if not text:
        return
    if pieces and pieces[-1].op == op:
        pieces[-1] = Piece(op, pieces[-1].text + text)
    else:
        pieces.append(Piece(op, text))

"""One folded view of untrusted text, so a rule written once matches every disguise of it.

The fold, per character, in this order:

1. drop every format character (Unicode category ``Cf``: zero-width joiners, U+2061..U+2064
   invisible operators, bidi controls, soft hyphen...), which render as nothing;
2. NFKC (full-width, ligatures, circled letters become plain letters);
3. strip diacritics (NFKD, drop combining marks; ``đ`` becomes ``d``), so Vietnamese rules are
   written once, without diacritics, and match text typed with or without them;
4. map a letter that looks like a Latin letter or digit to it (Cyrillic a U+0430, Greek
   omicron U+03BF...), from the Unicode confusables table that ``confusable-homoglyphs``
   ships (docs/adr/0005);
5. case-fold.

``fold`` keeps, for every folded character, the index of the original character it came from,
so a match in the folded text can be shown to a reviewer as the original span.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass

# Imported with this module and handed to ``files()`` as a module, not by name on the table's
# first use: by name, the workflow sandbox imported the package (and its ``_version``) mid-run,
# which the SDK warns about on every replay in its default sandbox.
import confusable_homoglyphs

#: ASCII characters read as one another in a name (``identity_key``'s last step).
_ASCII_SKELETON = str.maketrans({"1": "l", "i": "l", "|": "l", "0": "o"})


@dataclass(frozen=True)
class Folded:
    """``text`` is the folded text; ``origin[i]`` is the index in ``source`` of ``text[i]``."""

    source: str
    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int, limit: int = 160) -> str:
        """The original text behind ``text[start:end]``, cut to ``limit`` characters."""
        if start >= end or not self.origin:
            return ""
        first, last = self.origin[start], self.origin[end - 1] + 1
        original = self.source[first:last].strip()
        return original if len(original) <= limit else original[: limit - 1] + "…"


@functools.lru_cache(maxsize=1024)
def fold(text: str, *, casefold: bool = True) -> Folded:
    """Fold ``text`` for matching (see the module docstring); ``casefold=False`` skips step 5
    (for patterns that read capitals, such as a greeting's name). Cached: one draft's fields
    are folded by several checks."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for piece in _fold_char(char, casefold):
            out.append(piece)
            origin.append(index)
    return Folded(source=text, text="".join(out), origin=tuple(origin))


def fold_text(text: str) -> str:
    """Only the folded text (for comparisons that need no span)."""
    return fold(text).text


def identity_key(name: str) -> str:
    """What two names must share to be one person: each look-alike of an ASCII letter, digit or
    punctuation mark as that character (U+2010 hyphen, U+2212 minus and U+2013 en dash are
    ``-``, U+2024 is ``.``), then ``fold_text`` (format characters dropped, NFKC, no
    diacritics, look-alikes again, case-folded), every dash as ``-``, and no whitespace at
    all; last, the ASCII
    characters a reader confuses among themselves as one (``1 i l |`` as ``l``, ``0`` as ``o``),
    since the fold maps Cyrillic palochka to ``i`` and a capital I reads as ``l``.

    For separation of duties only: there a false match refuses an approval someone else can
    give, while a missed one lets a requester approve their own work. Never an identifier."""
    letters, punctuation = _confusables(), _punctuation_confusables()
    # The table is looked up before NFKC as well: NFKC turns some look-alikes into letters that
    # look like nothing ASCII (lunate sigma U+03F2, a "c", becomes sigma).
    name = "".join(letters.get(c) or punctuation.get(c, c) for c in name)
    out = []
    for char in fold_text(name):
        if char.isspace():
            continue
        if unicodedata.category(char) == "Pd":
            char = "-"
        out.append(punctuation.get(char, char))
    return "".join(out).translate(_ASCII_SKELETON)


def strip_format(text: str) -> str:
    """``text`` without format characters, NFKC-normalised, case kept: for patterns where case
    matters (base64, key prefixes)."""
    return unicodedata.normalize(
        "NFKC", "".join(c for c in text if unicodedata.category(c) != "Cf")
    )


@functools.lru_cache(maxsize=8192)
def _fold_char(char: str, casefold: bool) -> str:
    # Cached: messages reuse a few dozen characters, and folding one is several table lookups.
    confusable = _confusables()
    if unicodedata.category(char) == "Cf":
        return ""
    result = []
    for c in unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", char)):
        if unicodedata.combining(c):
            continue
        if c in "đĐ":
            c = "d"
        # The table's skeleton of Cyrillic capital I (U+0406) is "l"; its lower case maps to "i",
        # which is what a reader sees, so the lower case is looked up first when folding case.
        mapped = confusable.get(c.lower()) if casefold else None
        result.append(mapped or confusable.get(c, c))
    return "".join(result).casefold() if casefold else "".join(result)


@functools.cache
def _punctuation_confusables() -> dict[str, str]:
    """Non-ASCII characters the table says look like one ASCII punctuation mark, mapped to it."""
    mapping: dict[str, str] = {}
    for char, glyphs in _table().items():
        if len(char) != 1 or char.isascii():
            continue
        marks = [g["c"] for g in glyphs
                 if len(g["c"]) == 1 and g["c"].isascii() and not g["c"].isalnum()
                 and g["c"].isprintable() and not g["c"].isspace()]
        if marks:
            mapping[char] = marks[0]
    return mapping


@functools.cache
def _confusables() -> dict[str, str]:
    """Non-ASCII characters that look like one ASCII letter or digit, mapped to it.

    Read once, on first use (never at import: workflows import the policies package).
    """
    mapping: dict[str, str] = {}
    for char, glyphs in _table().items():
        if len(char) != 1 or char.isascii():
            continue
        ascii_like = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii()]
        letters = [g for g in ascii_like if g.isalnum()]
        if letters:
            mapping[char] = letters[0]
    return mapping


@functools.cache
def _table() -> dict[str, list[dict[str, str]]]:
    """The confusables table ``confusable-homoglyphs`` ships, parsed once per process.

    Read through ``importlib.resources`` rather than the package's ``utils.load``: separation of
    duties folds names inside a workflow, whose sandbox refuses that loader (``os.path``,
    the builtin ``open``); a data
    file shipped with a pinned package reads the same on every replay.
    """
    import json
    from importlib.resources import files

    data = files(confusable_homoglyphs).joinpath("confusables.json").read_text("utf-8")
    table: dict[str, list[dict[str, str]]] = json.loads(data)
    return table

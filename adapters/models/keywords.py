"""A small keyword extractor: what a saved page is about, from its own words (ADR 0042).

Deterministic and offline: no model, no table of topics, no download. Steps:

1. Tokenise each field into segments (punctuation ends a segment, so no phrase spans a full
   stop) of word tokens; ``node.js``, ``c++`` and ``e-mail`` stay one token each.
2. Fold each token (lower case, diacritics dropped: ``Thiết`` -> ``thiet``) and drop stop words
   (English and Vietnamese function words and a few words every how-to title uses).
3. Count each remaining term, weighted by where it stands: title 3, description 2, text 1.
   A plural counts with its singular when both occur ("dashboard", "dashboards").
4. Two adjacent terms are a phrase candidate when the pair occurs at least twice (one meeting
   is chance); a phrase takes its weight away from its words, so "data visualization" is one
   tag, not three.
5. Keep what weighs at least ``MIN_WEIGHT`` (a word of the title, or one the page repeats:
   description and text, or the text three times), highest first, ties by first appearance;
   confidence scales with weight.

Each keyword is shown in the spelling the page uses most (outside the title when it can, since
titles are often in Title Case).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

FIELD_WEIGHTS = {"title": 3.0, "description": 2.0, "text": 1.0}
MIN_WEIGHT = 3.0
MIN_PHRASE_COUNT = 2

# A stop mark ends a segment only before a space or the end, so "node.js" and "3.11" stay whole.
_SEGMENT = re.compile(r"[.,;:!?\u2026]+(?=\s|$)"
                      r"|[()\[\]{}\"\u201c\u201d\u00ab\u00bb|/\\\n\r\t]+"
                      r"|\s[-\u2013\u2014]\s")
_TOKEN = re.compile(r"[^\W_](?:[\w+#]|[.\-'\u2019](?=[^\W_]))*[+#]*")

# A word list reads and diffs better as text than as a list literal.
_STOP = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these
they this those through to too under until up very was we were what when where which while who
whom why will with would you your yours yourself yourselves s t don't can't won't it's i'm
you're we're they're isn't aren't doesn't didn't one two three get gets got make makes made use
used using uses way ways thing things new best good great better really much many every like
see guide guides how-to tips tip introduction intro part page article post read learn
tutorial tutorials step steps first last next today just via vs etc let lets want need know
va cua cho voi la cac nhung mot trong khi nay de duoc nguoi co khong da se thi ma cung nhu tu
ra vao len lai con nen rat bang theo tai ve hay hoac neu vi sau truoc den
""".split())  # noqa: SIM905


@dataclass(frozen=True)
class Keyword:
    name: str
    key: str
    weight: float
    confidence: float


def fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.replace("đ", "d").replace("Đ", "D"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower().replace(
        "\u2019", "'")


def _in_phrase(folded: str) -> bool:
    """May stand in a phrase: not a stop word or a number, two letters or more (Vietnamese
    syllables such as "kế" in "thiết kế" are short)."""
    return folded not in _STOP and len(folded) >= 2 and any(c.isalpha() for c in folded)


def _alone(folded: str, surface: str) -> bool:
    """May be a tag on its own: three letters or more, or an acronym in capitals (UI, AI)."""
    return len(folded) >= 3 or surface.isupper()


def _segments(text: str) -> list[list[tuple[str, str]]]:
    """(folded, surface) tokens per segment; a stop word splits a segment too."""
    out: list[list[tuple[str, str]]] = []
    for part in _SEGMENT.split(unicodedata.normalize("NFKC", text)):
        run: list[tuple[str, str]] = []
        for surface in _TOKEN.findall(part):
            folded = fold(surface)
            if _in_phrase(folded):
                run.append((folded, surface))
            elif run:
                out.append(run)
                run = []
        if run:
            out.append(run)
    return out


def extract_keywords(title: str, description: str = "", text: str = "", *,
                     limit: int = 5) -> list[Keyword]:
    """The page's ``limit`` heaviest terms and phrases, deterministically."""
    fields = {"title": title, "description": description, "text": text}
    runs = [(FIELD_WEIGHTS[f], r) for f, value in fields.items() for r in _segments(value)]
    stem = _stemmer({w for _, run in runs for w, _ in run})
    weight: defaultdict[str, float] = defaultdict(float)
    pairs: Counter[str] = Counter()
    pair_weight: defaultdict[str, float] = defaultdict(float)
    chosen: Counter[str] = Counter()
    surfaces: dict[str, Counter[tuple[bool, str]]] = {}
    order: dict[str, int] = {}

    def seen(key: str, surface: str, in_title: bool) -> None:
        surfaces.setdefault(key, Counter())[(not in_title, surface)] += 1

    keyed = [(w, [(stem(f), surface) for f, surface in run]) for w, run in runs]
    for w, run in keyed:
        for i, (key, surface) in enumerate(run):
            order.setdefault(key, len(order))
            if _alone(key, surface):
                weight[key] += w
                seen(key, surface, w == FIELD_WEIGHTS["title"])
            if i + 1 < len(run) and run[i + 1][0] != key:  # "very very" is no phrase
                phrase = f"{key} {run[i + 1][0]}"
                order.setdefault(phrase, len(order))
                pairs[phrase] += 1
    candidates = {p for p, n in pairs.items() if n >= MIN_PHRASE_COUNT}
    for w, run in keyed:
        for i in _phrase_starts(run, candidates, pairs):
            phrase = f"{run[i][0]} {run[i + 1][0]}"
            pair_weight[phrase] += w
            chosen[phrase] += 1
            seen(phrase, f"{run[i][1]} {run[i + 1][1]}", w == FIELD_WEIGHTS["title"])
            for word, _ in run[i:i + 2]:
                if word in weight:
                    weight[word] -= w
    scores: dict[str, float] = {p: pair_weight[p] for p, n in chosen.items()
                                if n >= MIN_PHRASE_COUNT}
    scores.update({k: v for k, v in weight.items() if v > 0})
    kept = sorted((k for k, v in scores.items() if v >= MIN_WEIGHT),
                  key=lambda k: (-scores[k], order[k]))[:limit]
    if not kept:
        return []
    top = scores[kept[0]]
    return [Keyword(name=_spelling(surfaces[k]), key=k, weight=scores[k],
                    confidence=round(0.5 + 0.45 * scores[k] / top, 2)) for k in kept]


def _phrase_starts(run: list[tuple[str, str]], candidates: set[str],
                   pairs: Counter[str]) -> list[int]:
    """Where phrases start in one segment, left to right without overlap: of two candidates
    sharing a word ("thiet ke" / "ke ui"), the more frequent takes it."""
    starts, i = [], 0
    while i < len(run) - 1:
        here = f"{run[i][0]} {run[i + 1][0]}"
        after = f"{run[i + 1][0]} {run[i + 2][0]}" if i + 2 < len(run) else ""
        if here in candidates and not (after in candidates and pairs[after] > pairs[here]):
            starts.append(i)
            i += 2
        else:
            i += 1
    return starts


def _stemmer(words: set[str]) -> Callable[[str], str]:
    """Plural -> singular, only when the page also uses the singular (so "news" stays)."""

    def stem(word: str) -> str:
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            return word[:-1] if word[:-1] in words else word
        return word

    return stem


def _spelling(seen: Counter[tuple[bool, str]]) -> str:
    """The most used spelling, preferring those outside the title; ties: first seen."""
    best = max(seen.items(), key=lambda item: (item[0][0], item[1]))
    return best[0][1]

"""Tag normalisation: pure and deterministic, so the same suggestion always gets the same key.

The key is what tags are matched on (exactly first, then by ``pg_trgm`` similarity of keys in
the store). It folds the ways one idea is written into one string:

    "UI design", "ui-design", "UI_Design"  -> "design ui"
    "Thiết kế UI"                          -> "design ui"   (glossary: "thiet ke" -> "design")

Steps: Unicode NFKD, drop combining marks (and map đ to d), lower case, every run of
non-alphanumerics to one space, glossary phrases to their English word, then the words sorted.
Sorting costs nothing for the trigram step: ``pg_trgm`` takes trigrams word by word, so word
order never changed a similarity anyway. The glossary is short on purpose: it holds the phrases
seen in real answers, not a translator.
"""

from __future__ import annotations

import re
import unicodedata

from contracts.tagging import DEFAULT_CONFIDENCE, MAX_TAGS, NormalisedTag, TagSuggestion

#: ``similarity(a, b)`` of two keys at or above this merges them into the existing tag.
#: Which pairs it does and does not merge is measured in tests/policies/test_tagging.py.
TRIGRAM_MERGE = 0.75

#: Folded phrase -> the word it means; applied longest first, on word boundaries.
GLOSSARY: dict[str, str] = {
    "thiet ke": "design",
    "lap trinh": "programming",
    "du lich": "travel",
    "am thuc": "food",
    "nhiep anh": "photography",
    "giao duc": "education",
    "suc khoe": "health",
    "tai chinh": "finance",
}
_GLOSSARY_RE = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in sorted(GLOSSARY, key=len, reverse=True)) + r")\b"
)
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def fold(text: str) -> str:
    """Lower case ASCII words separated by single spaces (diacritics dropped)."""
    decomposed = unicodedata.normalize("NFKD", text.replace("đ", "d").replace("Đ", "D"))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NON_ALNUM.sub(" ", plain.lower()).strip()


def tag_key(text: str) -> str:
    """The matching key of a tag name ("" when nothing alphanumeric is left)."""
    folded = _GLOSSARY_RE.sub(lambda m: GLOSSARY[m.group(1)], fold(text))
    return " ".join(sorted(folded.split()))


def display_name(text: str) -> str:
    """How a new tag is shown: the model's words with whitespace tidied, at most 80 chars."""
    return " ".join(text.split())[:80]


def normalise_suggestions(suggestions: list[TagSuggestion]) -> list[NormalisedTag]:
    """Keys for each suggestion, duplicates (same key) merged keeping the highest confidence,
    empty keys dropped, highest confidence first (ties by key), at most ``MAX_TAGS``."""
    best: dict[str, NormalisedTag] = {}
    for s in suggestions:
        key = tag_key(s.tag)
        if not key:
            continue
        confidence = s.confidence if s.confidence is not None else DEFAULT_CONFIDENCE
        held = best.get(key)
        if held is None or confidence > held.confidence:
            best[key] = NormalisedTag(key=key, name=display_name(s.tag), confidence=confidence)
    ranked = sorted(best.values(), key=lambda t: (-t.confidence, t.key))
    return ranked[:MAX_TAGS]

"""Which context facts are untrusted, and whether a draft repeats them. Pure.

Default deny: a context fact is untrusted (someone typed it: the customer, a third party, a
clinic clerk) unless it is one of the few structured facts a system wrote. Untrusted facts go
to the model as quoted data with their provenance (``policies.prompts``), are scanned by the
injection rules, and a draft that repeats one of them at length is flagged with the repeated
span. Names are the exception to the echo rule: a reminder says "Hi Lan" on purpose; but a
"name" that does not look like a name (digits, an ``@``, a sentence) gets no exception.
"""

from __future__ import annotations

import re

from policies.normalise import fold

#: Facts written by systems, in a closed vocabulary or a fixed format.
TRUSTED_FIELDS = frozenset({"crm.locale", "event.reminder_kind", "event.due_at", "event.channel"})
#: Facts a message repeats on purpose.
NAME_FIELDS = frozenset({"crm.first_name", "crm.pet_name"})
#: The customer's own contact data: never in a message body unless the action's rule says so.
CONTACT_FIELDS = {"crm.phone": "phone", "crm.email": "email", "crm.address": "address"}
#: Where each untrusted fact comes from, told to the model and the reviewer.
PROVENANCE = {
    "crm": "the CRM record (typed by clinic staff or the customer)",
    "event": "the event payload (typed by the producer's user)",
    "review": "a reviewer's note (may quote the customer)",
}
#: A draft repeating this many consecutive words of an untrusted fact is flagged.
ECHO_WORDS = 6

_NAME = re.compile(r"^[^\W\d_][^\W\d_.'\u2019 -]*(?:[ .'\u2019-]{1,2}[^\W\d_]+){0,3}\.?$")
_WORD = re.compile(r"\w+")


def is_untrusted(key: str) -> bool:
    return key not in TRUSTED_FIELDS


def provenance(key: str) -> str:
    return PROVENANCE.get(key.split(".", 1)[0], "an outside source")


def looks_like_name(value: str) -> bool:
    """At most four words of letters (hyphens, apostrophes, a dot after an initial), no digits,
    no ``@``, at most 40 characters: "Mary-Jane", "Nguyễn Thị Ánh", "Mr. Whiskers"."""
    value = value.strip()
    return 0 < len(value) <= 40 and bool(_NAME.match(value))


def echoed_span(draft_text: str, value: str, words: int = ECHO_WORDS) -> str | None:
    """The longest run of ``words`` or more consecutive words of ``value`` that ``draft_text``
    repeats (compared folded: case, diacritics and homoglyphs do not hide a copy), shown as
    the draft wrote it; None when there is none."""
    source = _tokens(value)
    if len(source) < words:
        return None
    grams = {tuple(source[i : i + words]) for i in range(len(source) - words + 1)}
    folded = fold(draft_text)
    spans = [(m.start(), m.end(), m.group()) for m in _WORD.finditer(folded.text)]
    best: tuple[int, int] | None = None
    i = 0
    while i + words <= len(spans):
        if tuple(s[2] for s in spans[i : i + words]) not in grams:
            i += 1
            continue
        j = i + words
        while j < len(spans) and _extends(source, [s[2] for s in spans[i : j + 1]]):
            j += 1
        if best is None or j - i > best[1] - best[0]:
            best = (i, j)
        i = j
    if best is None:
        return None
    return folded.span(spans[best[0]][0], spans[best[1] - 1][1])


def _tokens(text: str) -> list[str]:
    return _WORD.findall(fold(text).text)


def _extends(source: list[str], run: list[str]) -> bool:
    n = len(run)
    return any(source[k : k + n] == run for k in range(len(source) - n + 1))

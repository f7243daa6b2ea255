"""The postmortem validator (ADR 0046): a model's draft is kept only when every sentence rests on
the packet. Pure, so the CLI, the tests and ``ops incident show`` apply one rule.

Refused: a sentence that cites nothing (``no_ref``), a ref the packet does not hold
(``unknown_ref``), a number the sentence states that none of its cited items holds
(``figure_not_in_packet``: counts, durations, ids, the digits of a time or a version), text
that looks like personal data (``personal_data``, by the log rule, so times pass), and a
section left empty (``empty_section``).
Numbers are compared as values, so ``02`` matches ``2`` and ``2.50`` matches ``2.5``; small
numbers written as words (``three``) count as figures too, so spelling one out is no way round.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation

from contracts.incident import (
    SECTIONS,
    IncidentPacket,
    PacketItem,
    Postmortem,
    PostmortemFinding,
)
from policies.redaction import scrub_log_text

_CITATION = re.compile(r"\[[a-z]{1,8}:[^\]\s]{1,200}\]")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_DIGITS = re.compile(r"\d+")
_WORDS = {w: i for i, w in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty"))}
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


def _value(token: str) -> str:
    try:
        return format(Decimal(token).normalize(), "f")
    except InvalidOperation:  # pragma: no cover - the pattern only finds numbers
        return token


def numbers_in(text: str) -> set[str]:
    """Every figure a text states, as normalised values (``02`` -> ``2``)."""
    found = {_value(t) for t in _NUMBER.findall(text)}
    return found | {str(_WORDS[w.lower()]) for w in _WORD.findall(text)}


def item_figures(item: PacketItem) -> set[str]:
    """Every number an item holds: its figures, and the digits of its ids, times, versions
    (each run of digits too, so ``03:12:05`` matches a time stored with its microseconds)."""
    text = json.dumps(item.model_dump(mode="json", exclude={"refs"}))
    return numbers_in(text) | {_value(t) for t in _DIGITS.findall(text)}


def strip_citations(text: str) -> str:
    """The sentence without its ``[ref]`` citations (a ref's digits are not a figure)."""
    return _CITATION.sub("", text)


def _without_packet_values(text: str, cited: list[PacketItem]) -> str:
    """The text less the identifiers its cited items hold (a policy version such as
    ``2026-12-02.1`` reads like a phone number to the personal-data rule): the packet was
    redacted when it was built, so what it holds may be quoted."""
    values = {v for item in cited for v in (item.code, item.policy_version,
                                            item.prompt_version, item.tenant_id,
                                            *item.facts.values()) if v and len(v) >= 3}
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, " ")
    return text


def validate_postmortem(draft: Postmortem, packet: IncidentPacket) -> list[PostmortemFinding]:
    """What is wrong with ``draft`` against ``packet``; empty when it may be kept."""
    items = {i.ref: i for i in packet.items}
    findings: list[PostmortemFinding] = []
    for section in SECTIONS:
        sentences = getattr(draft, section)
        if not sentences:
            findings.append(PostmortemFinding(code="empty_section", section=section,
                                              sentence=0))
        for n, sentence in enumerate(sentences, start=1):
            cited = set(sentence.refs) | {c[1:-1] for c in _CITATION.findall(sentence.text)}
            if not cited:
                findings.append(PostmortemFinding(code="no_ref", section=section, sentence=n))
                continue
            unknown = sorted(r for r in cited if r not in items)
            findings += [PostmortemFinding(code="unknown_ref", section=section, sentence=n,
                                           what=r) for r in unknown]
            known = set().union(*(item_figures(items[r]) for r in cited if r in items))
            text = strip_citations(sentence.text)
            findings += [PostmortemFinding(code="figure_not_in_packet", section=section,
                                           sentence=n, what=f)
                         for f in sorted(numbers_in(text) - known)]
            quoted = _without_packet_values(text, [items[r] for r in cited if r in items])
            if scrub_log_text(quoted) != quoted:
                findings.append(PostmortemFinding(code="personal_data", section=section,
                                                  sentence=n))
    return findings

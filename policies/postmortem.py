"""The postmortem validator (ADR 0046): a model's draft is kept only when every sentence rests on
the packet. Pure, so the CLI, the tests and ``ops incident show`` apply one rule.

Refused: a sentence that cites nothing (``no_ref``), a ref the packet does not hold
(``unknown_ref``), a number the sentence states that none of its cited items holds as a
figure, or a date or time none of them holds as a moment (``figure_not_in_packet``), text
that looks like personal data (``personal_data``, by the log rule, so times pass), and a
section left empty (``empty_section``). Codes and versions the cited items hold may be quoted
whole (``2026-12-02.1``, ``target_504``); their digits are not figures. Numbers are compared as
values, so ``2.50`` matches ``2.5``; small numbers written as words (``three``) count as
figures too, so spelling one out is no way round.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
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
#: A date, a time or a date-time as a sentence writes one (ISO, or ``03:00:14``).
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                   r"(?:Z|[+-]\d{2}:\d{2})?)?|(?<![\d:])\d{1,2}:\d{2}(?::\d{2})?(?![\d:])")
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


def _is_time(value: str) -> bool:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def item_figures(item: PacketItem) -> set[str]:
    """The numbers an item holds as figures: counts, seconds, ids (its ref's too). Its times
    are checked as times (``times_of``), and the digits of its codes and versions only count
    where the sentence quotes the code or version whole."""
    return {_value(str(v)) for v in item.figures.values()} | numbers_in(item.ref)


def times_of(item: PacketItem) -> list[str]:
    """The item's moments in one canonical form, ``2026-12-02 03:00:14.123456+00:00``."""
    moments = [item.at] if item.at else []
    moments += [datetime.fromisoformat(v) for v in item.facts.values() if _is_time(v)]
    return [m.astimezone(UTC).isoformat(sep=" ") for m in moments]


def _time_known(expression: str, times: list[str]) -> bool:
    """Does a date, time or date-time written in a sentence name one of the cited moments?"""
    text = expression.replace("T", " ").replace("Z", "+00:00")
    if re.fullmatch(r"\d:\d{2}(?::\d{2})?", text):
        text = "0" + text
    return any(text in t for t in times)


def _identifiers(item: PacketItem) -> set[str]:
    """What a sentence may quote of an item whole: its code, versions, tenant, facts."""
    values = {item.code, item.policy_version, item.prompt_version, item.tenant_id,
              *(v for v in item.facts.values() if not _is_time(v))}
    return {v for v in values if v and len(v) >= 3}


def stated_figures(text: str, cited: list[PacketItem]) -> tuple[set[str], list[str]]:
    """What a sentence states beyond the identifiers it quotes: its figures, and the dates and
    times that none of the cited items holds."""
    text = strip_citations(text)
    for value in sorted(set().union(*map(_identifiers, cited)), key=len, reverse=True):
        text = text.replace(value, " ")
    times = [t for item in cited for t in times_of(item)]
    unknown_times = [m for m in _TIME.findall(text) if not _time_known(m, times)]
    return numbers_in(_TIME.sub(" ", text)), unknown_times


def strip_citations(text: str) -> str:
    """The sentence without its ``[ref]`` citations (a ref's digits are not a figure)."""
    return _CITATION.sub("", text)


def _without_packet_values(text: str, cited: list[PacketItem]) -> str:
    """The text less the identifiers its cited items hold (a policy version such as
    ``2026-12-02.1`` reads like a phone number to the personal-data rule): the packet was
    redacted when it was built, so what it holds may be quoted."""
    for value in sorted(set().union(*map(_identifiers, cited)), key=len, reverse=True):
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
            held = [items[r] for r in sorted(cited) if r in items]
            known = set().union(*map(item_figures, held))
            stated, unknown_times = stated_figures(sentence.text, held)
            findings += [PostmortemFinding(code="figure_not_in_packet", section=section,
                                           sentence=n, what=f)
                         for f in [*unknown_times, *sorted(stated - known)]]
            text = strip_citations(sentence.text)
            quoted = _without_packet_values(text, held)
            if scrub_log_text(quoted) != quoted:
                findings.append(PostmortemFinding(code="personal_data", section=section,
                                                  sentence=n))
    return findings

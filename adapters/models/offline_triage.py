"""The offline triage: the default when no model key is set (ADR 0044). No network, no clock,
no randomness: the same request always gives the same proposal.

Intent by keywords over the customer's subject and message (English and Vietnamese, accents
folded), in a fixed order (a refund before billing, a sick pet before a booking); the route by a
fixed table from intent to team. The table does not read the policy's lists on purpose: it is
the model's proposal, and a tenant whose list lacks a team (globex has no billing queue) sees
the validator refuse it. A name the sender gave that the record does not hold is a conflict; a
refund or billing question without an order number has it missing. A reply is drafted only for
the intents a person should answer (never for a booking or a general question), from the
record's first name and locale, citing both.

A reviewer's request-info questions are answered in ``reason``, every one of the review so far,
oldest first, each fact said once: the route and intent, the order number, the record's first
name, its language, the channel, when a question asks about one and the context holds it. A
question no fact answers is listed under ``missing`` as ``reviewer_question`` (the reviewer sees
it among the unknowns); no question is ever left out.
"""

from __future__ import annotations

import re
import unicodedata

from adapters.models.offline import OFFLINE_MODEL, _quote
from adapters.ports.models import TriageAnswer
from contracts import DraftPrompt, DraftRequest
from contracts.triage import (
    REVIEWER_QUESTION,
    Claim,
    FieldIssue,
    ReplyDraft,
    TriageProposal,
)

OFFLINE_TRIAGE_MODEL = f"{OFFLINE_MODEL}+triage-v1"

#: (intent, route, words): the first intent with a word in the message wins.
_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("refund_request", "billing", ("refund", "refunds", "money back", "hoan tien",
                                   "tra lai tien")),
    ("medical_question", "medical_team", ("vomit", "vomiting", "sick", "fever", "bleeding",
                                          "not eating", "non", "sot", "benh", "bo an",
                                          "thuoc")),
    ("complaint", "care_team", ("complain", "complaint", "rude", "terrible", "disappointed",
                                "khieu nai", "that vong", "buc minh")),
    ("billing_question", "billing", ("invoice", "bill", "bills", "charge", "charged",
                                     "payment", "hoa don", "thanh toan")),
    ("booking", "front_desk", ("appointment", "book", "booking", "schedule", "reschedule",
                               "dat lich", "lich hen", "hen kham")),
)
_FALLBACK = ("general_question", "front_desk")
_NEEDS_ORDER = frozenset({"refund_request", "billing_question"})
_TEAMS = {
    "en": {"billing": "billing team", "medical_team": "medical team", "care_team": "care team",
           "front_desk": "front desk"},
    "vi": {"billing": "bộ phận thanh toán", "medical_team": "đội ngũ bác sĩ",
           "care_team": "bộ phận chăm sóc khách hàng", "front_desk": "quầy lễ tân"},
}
_REPLY = {
    "en": ("Hi {name}, thank you for your message. Our {team} will look into it and get back "
           "to you."),
    "vi": "Chào {name}, cảm ơn bạn đã nhắn tin. {team} sẽ xem và phản hồi bạn sớm.",
}
_ASK_ORDER = {"en": " Could you send us your order number?",
              "vi": " Bạn vui lòng gửi giúp mã đơn hàng nhé."}
#: (topic, words in a question, folded): what a reviewer may ask that a fact or the proposal
#: answers. "route" is always answerable (it is the proposal's own reasoning).
_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((topic, re.compile(rf"\b(?:{words})\b"))
                                                    for topic, words in (
    ("route", "route|routed|queue|team|intent|bo phan"),
    ("order", "order|don hang|ma don"),
    ("name", "name|who|sender"),
    ("locale", "language|locale|ngon ngu"),
    ("channel", "channel|kenh"),
))
#: ``FieldIssue`` lists hold at most this many entries (``TriageProposal``).
_MAX_ISSUES = 10
_NAME = re.compile(r"^[^\W\d_]+(?:[ .'\u2019-]{1,2}[^\W\d_]+){0,3}\.?$")


class OfflineTriageProvider:
    """Satisfies the ``TriageProvider`` port with ``triage_offline``."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_TRIAGE_MODEL) -> None:
        self.model = model

    async def triage(self, prompt: DraftPrompt) -> TriageAnswer:
        proposal = triage_offline(prompt.request)
        return TriageAnswer(proposal=proposal, raw=proposal.model_dump_json(), model=self.model)


def triage_offline(request: DraftRequest) -> TriageProposal:
    ctx = request.context
    subject, body = _fold(ctx.get("event.subject", "")), _fold(ctx.get("event.body", ""))
    intent, route = _FALLBACK
    refs = ["event.body"]
    for name, team, words in _RULES:
        hit = [w for w in words if _has(body, w) or _has(subject, w)]
        if hit:
            intent, route = name, team
            refs = ["event.body"] if any(_has(body, w) for w in hit) else ["event.subject"]
            break
    conflicts, missing = [], []
    first = _name(ctx.get("crm.first_name", ""))
    sender = ctx.get("event.sender_name", "").strip()
    if first and sender and _fold(first) not in _fold(sender).split():
        conflicts.append(FieldIssue(field="customer_name",
                                    source_refs=["event.sender_name", "crm.first_name"],
                                    note="the sender's name is not the one on the record"))
    if intent in _NEEDS_ORDER and not ctx.get("event.order_id"):
        missing.append(FieldIssue(field="order_id", source_refs=["event.body"],
                                  note="no order number in the message or the event"))
    reply = None if route == "front_desk" else _reply(ctx, route, bool(missing))
    reason = f"Offline keyword triage: {intent.replace('_', ' ')} for the {route} queue."
    if request.questions():
        said, open_ = _answers(request.questions(), ctx, intent, route, refs[0])
        reason = " ".join([reason, *said])
        missing += _unanswered(open_, room=_MAX_ISSUES - len(missing))
    return TriageProposal(
        intent=Claim(value=intent, source_refs=refs), route=Claim(value=route, source_refs=refs),
        conflicts=conflicts, missing=missing, reply=reply, reason=reason,
        # Keywords estimate nothing: a number here would be made up.
        confidence=None,
    )


def _answers(questions: tuple[str, ...], ctx: dict[str, str], intent: str, route: str,
             where: str) -> tuple[list[str], list[str]]:
    """The sentences answering the questions, oldest first, each said once, and the questions
    no fact answers."""
    said: list[str] = []
    open_: list[str] = []
    for question in questions:
        asked = _fold(question)
        answers = [a for topic, words in _ASKS if words.search(asked)
                   if (a := _say(topic, ctx, intent, route, where))]
        said += [a for a in answers if a not in said]
        if not answers:
            open_.append(question)
    return said, open_


def _say(topic: str, ctx: dict[str, str], intent: str, route: str, where: str) -> str | None:
    """One fact as a sentence citing its ref, or None when the context does not hold it. A
    value too long to read at a glance is pointed to, not copied."""
    if topic == "route":
        return f"It goes to {route} as a {intent.replace('_', ' ')}: keywords in {where}."
    ref, what = {"order": ("event.order_id", "The order number"),
                 "name": ("crm.first_name", "The record's first name"),
                 "locale": ("crm.locale", "The record's language"),
                 "channel": ("event.channel", "The message's channel")}[topic]
    value = _name(ctx.get(ref, "")) if topic == "name" else ctx.get(ref, "").strip()
    if not value:
        return None
    return f"{what} is {value} ({ref})." if len(value) <= 40 else f"{what} is in {ref}."


def _unanswered(questions: list[str], room: int) -> list[FieldIssue]:
    """Each open question as a missing ``reviewer_question``; past the list's room, the rest
    are counted in its last entry, never dropped silently."""
    issues = [FieldIssue(field=REVIEWER_QUESTION, source_refs=["event.body"],
                         note=f"reviewer asked: {_quote(q)} (no context fact answers it)")
              for q in questions]
    if len(issues) <= room:
        return issues
    rest = len(questions) - (room - 1)
    return [*issues[: room - 1], FieldIssue(
        field=REVIEWER_QUESTION, source_refs=["event.body"],
        note=f"reviewer asked {rest} more questions no context fact answers")]


def _reply(ctx: dict[str, str], route: str, ask_order: bool) -> ReplyDraft:
    locale = "vi" if ctx.get("crm.locale", "en").lower().startswith("vi") else "en"
    first = _name(ctx.get("crm.first_name", ""))
    refs = ["crm.first_name"] if first else []
    if "crm.locale" in ctx:
        refs.append("crm.locale")
    team = _TEAMS[locale][route]
    text = _REPLY[locale].format(name=first or ("there" if locale == "en" else "bạn"),
                                 team=team if locale == "en" else team.capitalize())
    return ReplyDraft(message=text + (_ASK_ORDER[locale] if ask_order else ""), source_refs=refs)


def _fold(text: str) -> str:
    """Lower case without accents ("Hoàn tiền" -> "hoan tien"), đ as d."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().replace("đ", "d"))
    return " ".join("".join(c for c in decomposed if not unicodedata.combining(c)).split())


def _has(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text) is not None


def _name(value: str) -> str:
    value = value.strip()
    return value if len(value) <= 40 and _NAME.match(value) else ""

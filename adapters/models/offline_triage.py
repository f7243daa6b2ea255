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
"""

from __future__ import annotations

import re
import unicodedata

from adapters.models.offline import OFFLINE_MODEL
from adapters.ports.models import TriageAnswer
from contracts import DraftPrompt, DraftRequest
from contracts.triage import Claim, FieldIssue, ReplyDraft, TriageProposal

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
    return TriageProposal(
        intent=Claim(value=intent, source_refs=refs), route=Claim(value=route, source_refs=refs),
        conflicts=conflicts, missing=missing, reply=reply,
        reason=f"Offline keyword triage: {intent.replace('_', ' ')} for the {route} queue.",
        # Keywords estimate nothing: a number here would be made up.
        confidence=None,
    )


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

"""The offline drafter: the default when no model key is set. No network, no clock, no
randomness: the same request always gives the same draft, built only from the context facts it
was given, and each fact it uses is cited as a source ref (so it passes the same validator a
real model's draft must pass, and the demo needs no key).

Name fields are typed by people, so a "name" is used only when it looks like one: a CRM name
field holding "Lan (call 0912 345 678)" or a sentence is left out and listed as unknown, so the
template can never carry a phone number, an e-mail or an instruction from it into a message.
Free-text facts (notes) are never copied at all.

A reviewer's request-info questions get answers: when one asks about a fact the template uses
(the date, the kind of visit, the pet) and the context holds it, the next version says that
fact in a sentence of its own; anything else (which clinic? what price?) is named in
``unknowns`` as the reviewer's question no context fact answers. Every version answers every
question of the review so far, oldest first (a later question never drops an earlier answer),
and says a fact once however many questions ask for it. No note ever goes into the message.
"""

from __future__ import annotations

import re
from datetime import datetime

from adapters.models.names import OFFLINE_MODEL
from adapters.models.offline_orders import draft_order_confirmation
from adapters.ports.models import ModelAnswer
from contracts import Draft, DraftPrompt, DraftRequest
from contracts.fanout import ORDER_PLACED

# Letters, with spaces, hyphens, apostrophes or an initial's dot between at most four words.
# The adapter layer may not import policies, so this mirrors policies.taint.looks_like_name.
_NAME = re.compile(r"^[^\W\d_]+(?:[ .'\u2019-]{1,2}[^\W\d_]+){0,3}\.?$")

_MONTHS = {
    "en": [
        "January", "February", "March", "April", "May", "June",
        "July", "August", "September", "October", "November", "December",
    ],
    "vi": [f"tháng {n}" for n in range(1, 13)],
}
_KINDS = {
    "en": {"vaccination": "vaccination", "checkup": "check-up", "deworming": "deworming"},
    "vi": {"vaccination": "tiêm phòng", "checkup": "khám định kỳ", "deworming": "tẩy giun"},
}
_TEMPLATES = {
    "en": (
        "Hi {name}, this is a friendly reminder that {whose} {kind} is due on {due}. "
        "Reply to this message and we will help you book a visit."
    ),
    "vi": (
        "Chào {name}, phòng khám xin nhắc lịch {kind} của {whose} vào ngày {due}. "
        "Bạn hãy trả lời tin nhắn này để đặt lịch nhé."
    ),
}
#: Words in a reviewer's note -> the fact that answers it, and the sentence that says it.
_ASKS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(r"\b(?:date|when|day|due|ngày|hạn)\b", re.I), "due", "due"),
    (re.compile(r"\b(?:kind|type|vaccin\w*|check-?up|deworm\w*|visit|loại)\b", re.I),
     "kind", "kind"),
    (re.compile(r"\b(?:pet|animal|dog|cat|thú|bé)\b", re.I), "whose", "pet"),
)
_ANSWERS = {
    "en": {"due": "The date is {due}.", "kind": "The visit is for {kind}.",
           "pet": "This reminder is about {whose} care."},
    "vi": {"due": "Ngày hẹn là {due}.", "kind": "Lịch hẹn là {kind}.",
           "pet": "Tin nhắn này nhắc lịch của {whose}."},
}
_SLOT_REF = {"due": "event.due_at", "kind": "event.reminder_kind", "whose": "crm.pet_name"}
_FALLBACK = {
    "en": {"name": "there", "whose": "your pet's", "kind": "care visit", "due": "soon"},
    "vi": {"name": "bạn", "whose": "bé", "kind": "chăm sóc", "due": "sắp tới"},
}


class OfflineDraftProvider:
    """Template drafter that satisfies the ``DraftProvider`` port."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_MODEL) -> None:
        self.model = model

    async def propose(self, prompt: DraftPrompt) -> ModelAnswer:
        draft = draft_offline(prompt.request)
        return ModelAnswer(draft=draft, raw=draft.model_dump_json(), model=self.model)


def draft_offline(request: DraftRequest) -> Draft:
    """Fill the reminder template from the context, citing exactly the facts it used (an
    order's confirmation has a template of its own: ``offline_orders``)."""
    if request.ref.event_type == ORDER_PLACED:
        return draft_order_confirmation(request, _name)
    ctx = request.context
    locale = "vi" if ctx.get("crm.locale", "en").lower().startswith("vi") else "en"
    words = dict(_FALLBACK[locale])
    refs: list[str] = []
    unknowns: list[str] = []

    def use(ref: str, slot: str, value: str | None) -> None:
        if value:
            words[slot] = value
            refs.append(ref)
        else:
            unknowns.append(ref)

    use("crm.first_name", "name", _name(ctx.get("crm.first_name", "")))
    pet = _name(ctx.get("crm.pet_name", ""))
    use("crm.pet_name", "whose", (f"{pet}'s" if locale == "en" else pet) if pet else None)
    kind = ctx.get("event.reminder_kind", "").strip()
    use("event.reminder_kind", "kind", _KINDS[locale].get(kind, kind.replace("_", " ")))
    use("event.due_at", "due", _format_date(ctx.get("event.due_at", ""), locale))
    if "crm.locale" in ctx:
        refs.append("crm.locale")
    message = _TEMPLATES[locale].format(**words)
    reason = "Offline template reminder built only from the context facts cited."
    questions = request.questions()
    if questions:
        said: list[str] = []
        open_ = 0
        for question in questions:  # oldest first: each version answers them all, in order
            sentences = _answer(question, refs, words, locale)
            said += [one for one in sentences if one not in said]
            if not sentences:
                open_ += 1
                unknowns.append(f"reviewer asked: {_quote(question)}"
                                " (no context fact answers it)")
        message = " ".join([message, *said])
        reason = _answers_reason(request.version, len(questions), open_)
    return Draft(
        message=message,
        source_refs=refs,
        unknowns=unknowns,
        reason=reason,
        # No model estimated anything: recording a number here would be made up.
        confidence=None,
    )


def _answer(note: str, refs: list[str], words: dict[str, str], locale: str) -> list[str]:
    """The sentences that answer the note from facts already cited; empty when none does."""
    return [_ANSWERS[locale][answer].format(**words) for pattern, slot, answer in _ASKS
            if pattern.search(note) and _SLOT_REF[slot] in refs]


def _answers_reason(version: int, asked: int, open_: int) -> str:
    what = "question" if asked == 1 else f"{asked} questions"
    if not open_:
        return f"Version {version} answers the reviewer's {what} from the facts."
    if open_ == asked:
        verb = "is" if asked == 1 else "are"
        return f"Version {version}: the reviewer's {what} {verb} listed as unknown."
    return (f"Version {version} answers {asked - open_} of the reviewer's {what} from the "
            "facts; the rest are listed as unknown.")


def _quote(note: str) -> str:
    one_line = " ".join(note.split())
    return f"\u201c{one_line[:117]}...\u201d" if len(one_line) > 120 else f"\u201c{one_line}\u201d"


def _name(value: str) -> str:
    value = value.strip()
    return value if len(value) <= 40 and _NAME.match(value) else ""


def _format_date(value: str, locale: str) -> str | None:
    try:
        due = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    month = _MONTHS[locale][due.month - 1]
    return f"{due.day} {month} {due.year}"

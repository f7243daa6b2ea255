"""The offline drafter: the default when no model key is set. No network, no clock, no
randomness: the same request always gives the same draft, built only from the context facts it
was given, and each fact it uses is cited as a source ref (so it passes the same validator a
real model's draft must pass, and the demo needs no key).

Name fields are typed by people, so a "name" is used only when it looks like one: a CRM name
field holding "Lan (call 0912 345 678)" or a sentence is left out and listed as unknown, so the
template can never carry a phone number, an e-mail or an instruction from it into a message.
Free-text facts (notes) are never copied at all.
"""

from __future__ import annotations

import re
from datetime import datetime

from adapters.ports.models import ModelAnswer
from contracts import Draft, DraftPrompt, DraftRequest

OFFLINE_MODEL = "offline-template-v1"
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
    """Fill the reminder template from the context, citing exactly the facts it used."""
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
    return Draft(
        message=_TEMPLATES[locale].format(**words),
        source_refs=refs,
        unknowns=unknowns,
        reason="Offline template reminder built only from the context facts cited.",
        # No model estimated anything: recording a number here would be made up.
        confidence=None,
    )


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

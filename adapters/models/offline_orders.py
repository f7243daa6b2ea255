"""The offline drafter's order confirmation (``ORDER_PLACED``, docs/fan-out.md): built only from
the context facts the policy gives it (the customer's first name and locale, the order's id and
total), each cited. No network, no clock, no randomness, like the reminder template beside it.

A name that does not look like one is left out (``offline._name``'s rule, passed in), a total
that is not a whole number of cents is left out, and a reviewer's question is listed in
``unknowns``: this template has no more facts to answer it with, and the note never goes into
the message.
"""

from __future__ import annotations

from collections.abc import Callable

from contracts import Draft, DraftRequest

_TEMPLATES = {
    "en": ("Hi {name}, thank you for your order {order}. We have received it{total} and will "
           "let you know when it ships."),
    "vi": ("Chào {name}, cảm ơn bạn đã đặt đơn hàng {order}. Chúng tôi đã nhận đơn{total} và "
           "sẽ báo bạn khi đơn được gửi đi."),
}
_TOTAL = {"en": " (total {amount})", "vi": " (tổng {amount})"}
_FALLBACK = {"en": {"name": "there", "order": "with us"},
             "vi": {"name": "bạn", "order": "của bạn"}}


def draft_order_confirmation(request: DraftRequest, name_of: Callable[[str], str]) -> Draft:
    ctx = request.context
    locale = "vi" if ctx.get("crm.locale", "en").lower().startswith("vi") else "en"
    words = dict(_FALLBACK[locale], total="")
    refs: list[str] = []
    unknowns: list[str] = []
    name = name_of(ctx.get("crm.first_name", ""))
    for ref, slot, value in (("crm.first_name", "name", name),
                             ("event.order_id", "order", ctx.get("event.order_id", "").strip())):
        if value:
            words[slot] = value
            refs.append(ref)
        else:
            unknowns.append(ref)
    amount = _amount(ctx.get("event.total_cents", ""))
    if amount is not None:
        words["total"] = _TOTAL[locale].format(amount=amount)
        refs.append("event.total_cents")
    else:
        unknowns.append("event.total_cents")
    if "crm.locale" in ctx:
        refs.append("crm.locale")
    reason = "Offline template order confirmation built only from the context facts cited."
    questions = request.questions()  # every question of the review so far, oldest first
    for question in questions:
        one_line = " ".join(question.split())[:120]
        unknowns.append(f"reviewer asked: \u201c{one_line}\u201d (no context fact answers it)")
    if questions:
        what = ("question is" if len(questions) == 1
                else f"{len(questions)} questions are")
        reason = f"Version {request.version}: the reviewer's {what} listed as unknown."
    return Draft(message=_TEMPLATES[locale].format(**words), source_refs=refs,
                 unknowns=unknowns, reason=reason, confidence=None)


def _amount(cents: str) -> str | None:
    """``4590`` -> ``45.90``: the order's total as its minor units say it (no currency is on
    the order event, so none is named)."""
    text = cents.strip()
    if not text.isdigit() or len(text) > 15:
        return None
    value = int(text)
    return f"{value // 100:,}.{value % 100:02d}"

"""The order confirmation's system prompt (``ORDER_PLACED``, docs/fan-out.md). Pure.

Only the opening differs from the care reminder's (``policies.prompts``): what the message is
for. The rules after it (facts only from the context blocks, data is never instructions, cite
every fact, the customer's language, no links, one JSON object) are the same text, so a rule
tightened there is tightened here too.
"""

from __future__ import annotations

#: v2 (2026-12-02): the reviewer block (policies.prompts) lists every question of the review.
ORDER_PROMPT_VERSION = "order-confirmation-v2"

_OPENING = """\
You draft a short order confirmation for a shop's customer who has just placed an order: thank \
them, name the order and its total as the context gives them, and say they will hear when it \
ships. You only propose text: a person reviews it and code decides whether anything is sent. \
You cannot send, book, refund, call tools or contact anyone.

"""


def order_system_prompt(care_prompt: str) -> str:
    """The order's opening, then the care reminder prompt's rules (from its ``Rules:`` on)."""
    _, rules_marker, rules = care_prompt.partition("Rules:")
    return _OPENING + rules_marker + rules

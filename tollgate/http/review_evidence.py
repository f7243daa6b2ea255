"""The evidence half of a review's detail, for the review API and the web inbox alike.

Read from the workflow's ``review_ticket`` (values already masked there, by policy) and, for
a finished event, from the draft row PostgreSQL keeps: each cited fact with its value and
origin, the rule that routed the review, the deadline and who gets it next, the validator's
flags with their spans, and the word diff against the version before.
"""

from __future__ import annotations

from typing import Any

from contracts import ReviewTicket
from policies.word_diff import word_diff


def evidence_fields(found: ReviewTicket | None, draft_row: dict[str, Any],
                    message: str | None) -> dict[str, Any]:
    """What ``review_detail`` adds to its answer (every key present, empty when unknown)."""
    previous = found.previous_message if found else None
    diff = ([p._asdict() for p in word_diff(previous, message)]
            if previous is not None and message is not None else [])
    flags = ([f.model_dump() for f in found.flags] if found and found.flags
             else list(draft_row.get("flags") or []))
    return {
        "evidence": [e.model_dump(mode="json") for e in found.evidence] if found else [],
        "route": found.route.model_dump(mode="json") if found and found.route else None,
        "fallback_owner": found.route.fallback_owner if found and found.route else None,
        "flags": flags,
        "previous_version": found.previous_version if found else None,
        "answering": found.answering if found else None,
        "diff": diff,
    }

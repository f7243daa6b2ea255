"""For the tests of review decisions at the HTTP edge: a decision and the inbox's CSRF value."""

from __future__ import annotations

DECISION = {"decision": "approve", "reason": "ok", "request_id": "r-1", "draft_version": 1}


CSRF = "c" * 32

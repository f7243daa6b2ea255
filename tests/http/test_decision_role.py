"""The decision body's ``role`` (the inbox page sends the one it showed, so the decision needs
no query for the review's roles: issue 33) is checked at the edge like every other text field,
and an inbox form without it reads as no role named."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from tollgate.http.review_service import DecisionIn

BODY = {"decision": "approve", "reason": "ok", "request_id": "req-1", "draft_version": 1}


def test_role_is_optional_and_kept_when_named() -> None:
    assert DecisionIn.model_validate(BODY).role is None
    assert DecisionIn.model_validate({**BODY, "role": "care_lead"}).role == "care_lead"


@pytest.mark.parametrize("role", ["care\x00lead", "care\nlead", "\ud800", "", "r" * 101])
def test_hostile_role_is_refused_naming_the_field(role: str) -> None:
    with pytest.raises(ValidationError) as refused:
        DecisionIn.model_validate({**BODY, "role": role})
    assert refused.value.errors()[0]["loc"] == ("role",)

"""Whole-string patterns refuse a trailing newline (issue 25): ``re.match`` with ``$`` let
``"abc\\n"`` through, the way the id pattern once took ``wh-nl-key\\n``."""

from __future__ import annotations

import httpx

from adapters.http.messaging import _rejection_message
from policies.draft_validator import _safe_ref
from policies.matrix import _version_for


def test_a_matrix_file_name_with_a_trailing_newline_is_no_version() -> None:
    assert _version_for("2026-01-01.2.json") == ("2026-01-01", 2)
    assert _version_for("2026-01-01.2.json\n") is None


def test_a_source_ref_with_a_trailing_newline_is_invalid() -> None:
    assert _safe_ref("crm.email") == "crm.email"
    assert _safe_ref("crm.email\n") == "_invalid"


def test_a_target_code_with_a_trailing_newline_is_not_echoed() -> None:
    def rejected(code: str) -> str:
        return _rejection_message(httpx.Response(422, json={"code": code}))

    assert rejected("opted_out") == "target rejected the send (opted_out)"
    assert rejected("opted_out\n") == "target rejected the send (422)"

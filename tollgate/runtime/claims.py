"""Bounds on what a verified token may carry, checked before any claim reaches a decision, a
workflow or PostgreSQL. A signature proves who issued the token, not that its claims fit:
an issuer's admin (or a bug there) can put a 10 kB subject or a list of a million roles in one.

Each refusal names the claim and the rule, never the value (claims may be personal data).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from contracts.base import ID_BODY

#: A compact JWT longer than this is refused before it is parsed at all.
MAX_TOKEN_CHARS = 8192
#: ``ReviewDecision.reviewer`` and ``.role`` hold at most these; a longer claim would fail there.
MAX_NAME_CHARS = 128
MAX_ROLE_CHARS = 64
MAX_ROLES = 16
_TENANT = re.compile(ID_BODY)


class ClaimError(ValueError):
    """``claim`` broke ``rule``; both are safe to show. ``code`` is ``missing_claims`` when the
    claim is absent, else ``bad_claim``."""

    def __init__(self, claim: str, rule: str, *, missing: bool = False) -> None:
        super().__init__(f"claim '{claim}' {rule}")
        self.claim, self.rule = claim, rule
        self.code = "missing_claims" if missing else "bad_claim"


def _text(claim: str, value: Any, limit: int) -> str:
    if value is None:
        raise ClaimError(claim, "is missing", missing=True)
    if not isinstance(value, str):
        raise ClaimError(claim, "must be a string")
    if not 1 <= len(value) <= limit:
        raise ClaimError(claim, f"must be 1 to {limit} characters")
    # Control, format and unassigned characters and lone surrogates print as nothing or break
    # the stores (PostgreSQL refuses NUL); a name is what a person reads in the audit trail.
    if not value.isprintable() or value != value.strip():
        raise ClaimError(claim, "must be printable text without surrounding spaces")
    return value


def checked_claims(claims: Mapping[str, Any], *, roles_claim: str,
                   tenant_claim: str) -> tuple[str, tuple[str, ...], str]:
    """(reviewer, roles, tenant) from verified ``claims``, or ``ClaimError``."""
    _text("sub", claims.get("sub"), 255)
    name_claim = "preferred_username" if claims.get("preferred_username") else "sub"
    reviewer = _text(name_claim, claims[name_claim], MAX_NAME_CHARS)
    roles = claims.get(roles_claim)
    roles = [roles] if isinstance(roles, str) else roles
    if not roles:
        raise ClaimError(roles_claim, "is missing", missing=True)
    if not isinstance(roles, list):
        raise ClaimError(roles_claim, "must be a list of role names")
    if len(roles) > MAX_ROLES:
        raise ClaimError(roles_claim, f"may hold at most {MAX_ROLES} roles")
    checked = tuple(_text(roles_claim, role, MAX_ROLE_CHARS) for role in roles)
    tenant = claims.get(tenant_claim)
    if tenant is None:
        raise ClaimError(tenant_claim, "is missing", missing=True)
    if not isinstance(tenant, str) or _TENANT.fullmatch(tenant) is None:
        raise ClaimError(tenant_claim, "must be a tenant id (letters, digits, . _ : -)")
    return reviewer, checked, tenant

"""Reviewer identity from OIDC access tokens, for the HTTP service: roles and tenant come from
the token, never from the request. The verification itself is ``tollgate.runtime.identity``,
shared with the CLI and the workers' update validator (ADR 0026)."""

from __future__ import annotations

from fastapi import HTTPException, Request

from tollgate.runtime.identity import Identity, IdentityError, Verifier

#: Where the web inbox keeps the token (HttpOnly, SameSite=Strict).
TOKEN_COOKIE = "tollgate_token"  # noqa: S105 - a cookie name, not a secret


async def caller(request: Request, verifier: Verifier | None) -> Identity:
    """The verified caller, from the bearer header (or, for reads, the inbox's cookie): 401
    without a token or with one that is not valid here, 503 with no identity provider."""
    header = request.headers.get("authorization", "")
    token = header[7:].strip() if header.lower().startswith("bearer ") else ""
    if request.method == "GET":
        # The inbox's cookie may read; a decision through the API needs the header, so a form
        # on another site can never make one (the inbox's own forms carry a CSRF value).
        token = token or request.cookies.get(TOKEN_COOKIE, "")
    if not token:
        raise HTTPException(401, "send Authorization: Bearer <token>",
                            headers={"WWW-Authenticate": "Bearer"})
    if verifier is None:
        raise HTTPException(503, "no identity provider is configured")
    try:
        return await verifier.verify(token)
    except IdentityError as exc:
        raise HTTPException(401, f"{exc.code}: {exc.message}",
                            headers={"WWW-Authenticate": "Bearer"}) from None

"""The IETF ``Idempotency-Key`` header on ``POST /v1/items`` and the decision API (issue 29).

A key's first answer is kept in PostgreSQL by (tenant, route, key) with the sha256 of the body:
the same key and body get that answer again (status and body) without running the call twice;
the same key with another body is refused with 409. Only answers the route returns are kept; a
refusal raised on the way (401, 403, 422, 503) is not, so a retry after it runs again.

The header is checked at the edge: printable ASCII, 1 to 255 characters, else the edge's 422
naming ``$.Idempotency-Key``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import Header
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from tollgate.http.deps import Services
from tollgate.http.edge_errors import Refusal

IdempotencyKey = Annotated[str | None, Header(
    alias="Idempotency-Key", min_length=1, max_length=255, pattern=r"^[\x20-\x7e]+$",
    description="Sent again with the same body: the first answer again. With another body: "
                "409. Printable ASCII, at most 255 characters.")]

#: The route's ``responses=`` entry for the refusal of a reused key.
KEY_REUSED: dict[int | str, dict[str, Any]] = {
    409: {"model": Refusal, "description": "Idempotency-Key already used with another body"}}


def body_sha256(caller: str, body: BaseModel) -> str:
    """The body as the route read it, so spacing or key order do not make it another body; with
    the caller, so another user of the tenant reusing a key is refused, never shown an answer."""
    return hashlib.sha256(f"{caller}\n{body.model_dump_json()}".encode()).hexdigest()


async def once(svc: Services, *, tenant: str, caller: str, route: str, key: str | None,
               body: BaseModel,
               run: Callable[[], Awaitable[JSONResponse]]) -> JSONResponse:
    """``run()``'s answer, or the answer kept for ``key`` (409 when the body differs)."""
    if key is None:
        return await run()
    from adapters.postgres.idempotency import IdempotencyStore

    store, digest = IdempotencyStore(svc.pool), body_sha256(caller, body)
    kept = await store.find(tenant, route, key)
    if kept is None:
        answer = await run()
        content = json.loads(bytes(answer.body))
        kept = await store.keep(tenant, route, key, digest, answer.status_code, content)
        if (kept.body_sha256, kept.status, kept.answer) == (digest, answer.status_code, content):
            return answer  # this call's own answer (or one a concurrent retry kept identically)
    if kept.body_sha256 != digest:
        return JSONResponse(status_code=409, content={
            "detail": "idempotency_key_reused: this Idempotency-Key was sent with another body"})
    return JSONResponse(kept.answer, status_code=kept.status)

"""422 for a request FastAPI could not validate, without echoing what was sent.

FastAPI's own answer repeats each field's input: a lone surrogate there cannot be encoded (so
the refusal itself became a 500), and a personal value or a token would be sent back and
logged. This answer names the field (a JSON path) and the rule only (docs/api.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel

from policies.edge_text import Violation, check_value, parse_json, plain_key
from tollgate.http.deps import services
from tollgate.http.identity import caller

#: pydantic error types that are the edge's text rules under another name.
_RULES = {"string_unicode": "lone_surrogate", "string_too_long": "string_too_long",
          "json_invalid": "not_json"}


class EdgeIssue(BaseModel):
    loc: list[str]
    msg: str
    type: str


class EdgeInvalid(BaseModel):
    """The 422 of a request FastAPI could not validate (the OpenAPI document's schema of it)."""

    code: str
    field: str
    rule: str
    message: str
    detail: list[EdgeIssue]


class Refusal(BaseModel):
    """A refusal a route raised (``HTTPException``): one line saying why."""

    detail: str


def _path(loc: tuple[object, ...]) -> str:
    parts = [p for p in loc if p not in ("body", "query", "path", "header")]
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{plain_key(p)}" for p in parts)


async def _invalid(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": [str(p) if isinstance(p, int) else plain_key(p) for p in e.get("loc", ())],
               "msg": e.get("msg", ""), "type": e.get("type", "")} for e in exc.errors()]
    first = exc.errors()[0] if exc.errors() else {}
    field = _path(tuple(first.get("loc", ())))
    rule = _RULES.get(first.get("type", ""), first.get("type", "invalid"))
    return JSONResponse(status_code=422, content={
        "code": "invalid_request", "field": field, "rule": rule,
        "message": f"{field}: {first.get('msg', 'invalid')}", "detail": errors})


def refused(violation: Violation) -> JSONResponse:
    """The edge's 422 for a body its text rules refuse (docs/api.md, "Refused text")."""
    return _refusal(violation.field, violation.rule, violation.message)


def _refusal(field: str, rule: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=422, content={
        "code": "invalid_request", "field": field, "rule": rule, "message": message,
        "detail": [{"loc": ["body"], "msg": message, "type": rule}]})


class EdgeRoute(APIRoute):
    """A JSON route whose body meets the edge's text rules before FastAPI parses it.

    FastAPI answers a body ``json.loads`` cannot read for another reason than a syntax error (a
    thousand nested brackets, an integer of 5,000 digits, bytes that are not UTF-8) with a bare
    400 that names neither field nor rule; the body is read once and cached, so the route's own
    parse sees the same bytes.

    Every route it serves takes the bearer token: a body refused here (or by FastAPI's parse)
    is answered only once the token is good, so an unauthenticated caller hears 401 and nothing
    about its body, as it does when the route's models refuse the body.
    """

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            kind = request.headers.get("content-type", "")
            raw = await request.body() if request.method in ("POST", "PUT", "PATCH") else b""
            if raw and ("json" in kind or not kind):
                svc = services(request)
                violation = _violation(raw, svc.max_body)
                if violation is not None:
                    await caller(request, svc.verifier)  # 401 (or 503) first
                if violation is not None and violation is not _SYNTAX:
                    return refused(violation)
            return await handler(request)

        return checked


#: A body with a syntax error: FastAPI's own 422 (json_invalid, with its position) answers it.
_SYNTAX = Violation("$", "not_json")


def _violation(raw: bytes, max_chars: int) -> Violation | None:
    """The rule ``raw`` breaks (``_SYNTAX``: a syntax error), a key held twice included: the
    route's parse would keep one of its values, deciding on one of two no client sends
    together (``{"decision": "approve", "decision": "reject"}``)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Violation("$", "not_json")
    value, found = parse_json(text, max_chars=max_chars)
    if found is not None:
        return _SYNTAX if found.rule == "not_json" else found
    try:
        json.loads(text)  # what the route's parse does: a body it reads is the models' to judge
    except ValueError:  # valid JSON it cannot read: an integer of thousands of digits
        return check_value(value) or Violation("$", "number_too_large")
    return None


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid)

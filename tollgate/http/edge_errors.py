"""422 for a request FastAPI could not validate, without echoing what was sent.

FastAPI's own answer repeats each field's input: a lone surrogate there cannot be encoded (so
the refusal itself became a 500), and a personal value or a token would be sent back and
logged. This answer names the field (a JSON path) and the rule only (docs/api.md).
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

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
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


async def _invalid(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [{"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg", ""),
               "type": e.get("type", "")} for e in exc.errors()]
    first = exc.errors()[0] if exc.errors() else {}
    field = _path(tuple(first.get("loc", ())))
    rule = _RULES.get(first.get("type", ""), first.get("type", "invalid"))
    return JSONResponse(status_code=422, content={
        "code": "invalid_request", "field": field, "rule": rule,
        "message": f"{field}: {first.get('msg', 'invalid')}", "detail": errors})


def install(app: FastAPI) -> None:
    app.add_exception_handler(RequestValidationError, _invalid)

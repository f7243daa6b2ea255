"""The reviewer's web inbox: server-rendered pages on the same calls as the review API.

No scripts and no build step. The token lives in an HttpOnly, SameSite=Strict cookie; every
form carries a CSRF value that must equal the one in its own cookie (double submit), and the
content security policy forbids scripts, so a draft can only ever be shown as text (Jinja
autoescaping on, and ``white-space: pre-wrap`` rather than markup).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
from importlib import resources
from typing import Annotated, Any

import jinja2
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from pydantic import ValidationError
from starlette.datastructures import FormData

from tollgate.http import review_service as rs
from tollgate.http.deps import Services, services
from tollgate.http.identity import TOKEN_COOKIE
from tollgate.runtime.identity import Identity, IdentityError

router = APIRouter(include_in_schema=False)
Svc = Annotated[Services, Depends(services)]
CSRF_COOKIE = "tollgate_csrf"
#: A decision's answer, carried across the redirect to the review page and read once.
NOTICE_COOKIE = "tollgate_notice"
_NOTICE_MAX = 600
_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
            "form-action 'self'; frame-ancestors 'none'", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


def _templates() -> Jinja2Templates:
    folder = str(resources.files("tollgate.http") / "templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), autoescape=True)
    return Jinja2Templates(env=env)


_pages = _templates()


def _page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
    csrf = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
    response = _pages.TemplateResponse(request, name, {"csrf": csrf, **context},
                                       status_code=status, headers=_HEADERS)
    _cookie(request, response, CSRF_COOKIE, csrf)
    return response


def _cookie(request: Request, response: Response, name: str, value: str) -> None:
    response.set_cookie(name, value, httponly=True, samesite="strict", path="/",
                        secure=request.url.scheme == "https")


def _check_csrf(request: Request, form: FormData) -> None:
    """403 unless the form's one ``csrf`` value equals its cookie. Two values are refused by
    name, whatever they hold: comparing either would let the other one through unread."""
    given = form.getlist("csrf")
    if len(given) > 1:
        raise HTTPException(403, "csrf: sent more than once; the form was not sent from this "
                                 "inbox as it is; reload it")
    expected = request.cookies.get(CSRF_COOKIE, "")
    value = given[0] if given and isinstance(given[0], str) else ""
    if not expected or not hmac.compare_digest(expected.encode(), value.encode()):
        raise HTTPException(403, "the form is stale or was not sent from this inbox; reload it")


def _once_each(form: FormData, fields: tuple[str, ...], outcome: str) -> None:
    """422 for a field sent twice (``decision=approve&decision=reject``, two ``token``): taking
    one of its values would act on what the sender may not have meant. A field the form does
    not have is not named."""
    seen: set[str] = set()
    for name, _ in form.multi_items():
        if name in seen:
            shown = name if name in fields else "a field this form does not have"
            raise HTTPException(422, f"{shown}: sent more than once; {outcome}")
        seen.add(name)


async def _who(request: Request, svc: Services) -> Identity | None:
    token = request.cookies.get(TOKEN_COOKIE)
    if not token or svc.verifier is None:
        return None
    try:
        return await svc.verifier.verify(token)
    except IdentityError:
        return None


def _to_login() -> Response:
    return RedirectResponse("/inbox/login", status_code=303)


@router.get("/inbox/login", response_class=HTMLResponse)
async def login_page(request: Request) -> Response:
    return _page(request, "login.html", who=None)


@router.post("/inbox/login")
async def login(request: Request, svc: Svc) -> Response:
    form = await request.form()
    _check_csrf(request, form)
    _once_each(form, ("csrf", "token"), "nobody was signed in")
    token = form.get("token")
    if not isinstance(token, str):
        raise HTTPException(422, "token: paste a token")
    if svc.verifier is None:
        raise HTTPException(503, "no identity provider is configured")
    try:
        await svc.verifier.verify(token.strip())
    except IdentityError as exc:
        return _page(request, "login.html", 401, who=None, error=exc.message)
    response = RedirectResponse("/inbox", status_code=303)
    _cookie(request, response, TOKEN_COOKIE, token.strip())
    return response


@router.post("/inbox/logout")
async def logout(request: Request) -> Response:
    form = await request.form()
    _check_csrf(request, form)
    _once_each(form, ("csrf",), "nobody was signed out")
    response = _to_login()
    response.delete_cookie(TOKEN_COOKIE, path="/")
    return response


@router.get("/inbox", response_class=HTMLResponse)
async def inbox(request: Request, svc: Svc) -> Response:
    who = await _who(request, svc)
    if who is None:
        return _to_login()
    return _page(request, "list.html", who=who, reviews=await rs.list_reviews(svc, who))


def _review_path(workflow_id: str) -> str:
    return f"/inbox/review/{workflow_id}"


def _read_notice(request: Request) -> tuple[str | None, bool]:
    """The notice the decision left for this page (ours, but read as untrusted: any value
    that does not decode is no notice)."""
    raw = request.cookies.get(NOTICE_COOKIE, "")
    try:
        found = json.loads(base64.urlsafe_b64decode(raw.encode("ascii")))
        text, refused = found["text"], found["refused"]
    except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
        return None, False
    if not isinstance(text, str) or not text.isprintable() or len(text) > _NOTICE_MAX:
        return None, False
    return text, refused is True


@router.get("/inbox/review/{workflow_id:path}", response_class=HTMLResponse)
async def review_page(request: Request, svc: Svc, workflow_id: str) -> Response:
    who = await _who(request, svc)
    if who is None:
        return _to_login()
    detail = await rs.review_detail(svc, who, workflow_id)
    notice, refused = _read_notice(request)
    response = _page(request, "review.html", who=who, r=detail, notice=notice,
                     refused=refused)
    if NOTICE_COOKIE in request.cookies:
        response.delete_cookie(NOTICE_COOKIE, path=_review_path(workflow_id))
    return response


def _form_int(value: object) -> object:
    """A form's number as the int its text spells (ASCII digits, at most 7), else as sent: the
    decision's strict model refuses it, naming the field (``1.5``, ``true``, ``1_0``)."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 7:
        return int(value)
    return value


#: The fields of a decision's form; a field it does not have is not decided on, so not named.
_DECISION_FIELDS = ("csrf", "decision", "reason", "request_id", "draft_version", "role")


@router.post("/inbox/review/{workflow_id:path}/decision", response_class=HTMLResponse)
async def decide(request: Request, svc: Svc, workflow_id: str) -> Response:
    # CSRF, then the session, then the body: a post without a good session hears what every
    # unauthenticated post hears (403 for a form not from this inbox, else the login page)
    # whatever its body holds, as the review API answers 401 first. CSRF stays first (as
    # before): a form posted from another site sends no cookie, and keeps its 403.
    form = await request.form()
    _check_csrf(request, form)
    who = await _who(request, svc)
    if who is None:
        return _to_login()
    _once_each(form, _DECISION_FIELDS, "nothing was decided")
    try:
        body = rs.DecisionIn.model_validate({
            "decision": form.get("decision"), "reason": form.get("reason"),
            "request_id": form.get("request_id"),
            "draft_version": _form_int(form.get("draft_version")),
            "role": form.get("role") or None})
    except ValidationError as exc:
        first = exc.errors()[0]
        raise HTTPException(422, f"{first['loc'][0]}: {first['msg']}") from None
    out = await rs.decide(svc, who, workflow_id, body)
    notice = out.message if out.accepted else f"refused: {out.reason_code}: {out.message}"
    # Post/Redirect/Get: the answer is a page reached by GET, so reloading it (a phone's
    # pull-to-refresh) reads the review again instead of sending the decision again.
    response = RedirectResponse(_review_path(workflow_id), status_code=303)
    carried = json.dumps({"text": notice[:_NOTICE_MAX], "refused": not out.accepted})
    response.set_cookie(NOTICE_COOKIE, base64.urlsafe_b64encode(carried.encode()).decode(),
                        max_age=60, path=_review_path(workflow_id), httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")
    return response

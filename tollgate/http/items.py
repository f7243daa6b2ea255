"""``POST /v1/items``: save a page to the content library (seed 001). The item and its PENDING
tagging job are committed in one transaction before anything else; the tagging workflow is
started after the commit, and a start that fails never fails the save (the relay in every main
worker starts it later). The answer never waits for the model.

The saving user and tenant are the token's, never fields of the request; the token must hold
one of ``TOLLGATE_ITEM_SAVE_ROLES`` (403 otherwise).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tollgate.http.deps import Services, services
from tollgate.http.edge_errors import EdgeInvalid, EdgeRoute, Refusal
from tollgate.http.idempotency import KEY_REUSED, IdempotencyKey, once
from tollgate.http.reviews import Who
from tollgate.runtime.identity import Identity

router = APIRouter(tags=["items"], route_class=EdgeRoute)
Svc = Annotated[Services, Depends(services)]


class ItemIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(max_length=2048, description="http(s) address of the page")
    title: str = Field(max_length=500)
    description: str = Field(default="", max_length=5000)
    text: str = Field(default="", max_length=10_000,
                      description="the page's readable text, for the tagger to read")


class ItemOut(BaseModel):
    item_id: int
    created: bool = Field(description="false: this user had already saved this URL")
    job_state: str
    started: bool = Field(description="the tagging workflow's start is known durable")


@router.post("/v1/items", response_model=ItemOut, status_code=201,
             responses={200: {"model": ItemOut, "description": "already saved"},
                        401: {"model": Refusal}, 403: {"model": Refusal},
                        422: {"model": EdgeInvalid | Refusal,
                              "description": "the edge's refusal, or an invalid capture"},
                        **KEY_REUSED})
async def post_item(body: ItemIn, svc: Svc, who: Who,
                    idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Save a page; tagging runs later and never holds the save up."""
    return await once(svc, tenant=who.tenant, caller=who.reviewer,
                      route="POST /v1/items", key=idempotency_key,
                      body=body, run=lambda: save(body, svc, who))


async def save(body: ItemIn, svc: Services, who: Identity) -> JSONResponse:
    from adapters.postgres.tagging import TaggingStore
    from contracts.errors import InvalidInput
    from contracts.tagging import ItemCapture
    from policies.edge_text import check_string
    from tollgate.intake.items import SaveRefused, check_save_roles, save_item, temporal_starter

    for name, value, free in (("url", body.url, False), ("title", body.title, True),
                              ("description", body.description, True),
                              ("text", body.text, True)):
        bad = check_string(value, f"$.{name}", free_text=free)
        if bad is not None:  # PostgreSQL text and UTF-8 would refuse it later, as a 500
            raise HTTPException(422, f"invalid item: {bad.message} ({bad.rule})")
    try:
        check_save_roles(who.roles, svc.settings.identity.item_save_roles)
    except SaveRefused as exc:
        raise HTTPException(403, f"role_not_allowed: {exc}") from None
    try:
        capture = ItemCapture(user_id=who.reviewer, url=body.url, title=body.title,
                              description=body.description, text=body.text)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise HTTPException(422, f"invalid item: {'.'.join(map(str, first['loc']))}: "
                                 f"{first['msg']}") from None

    async def start(item_id: int, run: int) -> None:
        client = await svc.temporal.client()  # 503 when Temporal is down: the relay starts it
        await temporal_starter(client, svc.settings.task_queue)(item_id, run)

    try:
        saved = await save_item(TaggingStore(svc.pool), start, capture, tenant=who.tenant)
    except InvalidInput as exc:
        raise HTTPException(422, f"invalid item: {exc.message}") from None
    out = ItemOut(item_id=saved.item_id, created=saved.created,
                  job_state=saved.job_state.value, started=saved.started)
    return JSONResponse(out.model_dump(), status_code=201 if saved.created else 200)

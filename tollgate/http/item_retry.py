"""``POST /v1/items/{item_id}/retry``: the owner retries a FAILED tagging job (seed 001).

The owner is the token's subject and tenant, never a field of the request, so only the user who
saved the item can retry it. Another user's item and a missing one get the same 404 (no probing
of other users' items); a job in any state but FAILED is 409 (a job still being attempted is not
offered a second run). After the reset the start is tried once; with Temporal unreachable the
answer says ``started: false`` and the relay in every main worker starts it.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException
from fastapi import Path as PathParam
from pydantic import BaseModel, Field

from tollgate.http.deps import Services, services
from tollgate.http.edge_errors import EdgeRoute, Refusal
from tollgate.http.reviews import Who

router = APIRouter(tags=["items"], route_class=EdgeRoute)
Svc = Annotated[Services, Depends(services)]
ItemId = Annotated[int, PathParam(ge=1, le=2**63 - 1)]


class RetryOut(BaseModel):
    item_id: int
    job_state: str
    run: int = Field(description="which run this is: 1 was the save's, each retry adds one")
    started: bool = Field(description="the new run's start is known durable")


@router.post("/v1/items/{item_id}/retry", response_model=RetryOut,
             responses={401: {"model": Refusal}, 403: {"model": Refusal},
                        404: {"model": Refusal, "description": "no such item of this user"},
                        409: {"model": Refusal, "description": "the job is not FAILED"}})
async def retry_item(item_id: ItemId, svc: Svc, who: Who) -> RetryOut:
    """Retry the FAILED tagging job of one of the caller's items."""
    from adapters.postgres.tagging import TaggingStore
    from contracts.errors import InvalidInput, RejectedError
    from tollgate.intake.items import (
        SaveRefused,
        check_save_roles,
        retry_failed,
        temporal_starter,
    )

    try:
        check_save_roles(who.roles, svc.settings.identity.item_save_roles)
    except SaveRefused as exc:
        raise HTTPException(403, f"role_not_allowed: {exc}") from None

    async def start(item: int, run: int) -> None:
        client = await svc.temporal.client()
        await temporal_starter(client, svc.settings.task_queue)(item, run)

    try:
        job, started = await retry_failed(TaggingStore(svc.pool), start, tenant=who.tenant,
                                          user=who.reviewer, item_id=item_id)
    except InvalidInput:
        raise HTTPException(404, f"no_such_job: no tagging job for item {item_id}") from None
    except RejectedError as exc:
        raise HTTPException(409, f"not_failed: {exc.message}") from None
    return RetryOut(item_id=job.item_id, job_state=job.state.value, run=job.runs,
                    started=started)

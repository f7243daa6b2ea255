"""The review API: ``GET /v1/reviews``, ``GET /v1/reviews/{id}``, ``POST .../decision``.

Every call needs ``Authorization: Bearer <access token>``; the reviewer, roles and tenant are
the token's. Refusals answer 409 (403 for ``cross_tenant``) with the workflow's reason code.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from tollgate.http import review_service as rs
from tollgate.http.deps import Services, services
from tollgate.http.edge_errors import EdgeInvalid, EdgeRoute, Refusal
from tollgate.http.idempotency import KEY_REUSED, IdempotencyKey, once
from tollgate.http.identity import caller
from tollgate.runtime.identity import Identity

router = APIRouter(tags=["reviews"], route_class=EdgeRoute)
Svc = Annotated[Services, Depends(services)]


async def identity(request: Request, svc: Svc) -> Identity:
    """The verified caller (``tollgate.http.identity.caller``)."""
    return await caller(request, svc.verifier)


Who = Annotated[Identity, Depends(identity)]
_AUTH: dict[int | str, dict[str, Any]] = {
    401: {"model": Refusal, "description": "no token, or a token that is not valid here"},
    403: {"model": Refusal, "description": "the token's tenant is not a valid tenant id"},
    503: {"model": Refusal, "description": "Temporal is unreachable"},
}
_NOT_FOUND: dict[int | str, dict[str, Any]] = {404: {"model": Refusal}}
#: Declared where FastAPI would otherwise declare its own 422 body, which the edge replaces.
_INVALID: dict[int | str, dict[str, Any]] = {422: {"model": EdgeInvalid}}


@router.get("/v1/reviews", response_model=list[rs.ReviewSummary], responses=_AUTH)
async def get_reviews(svc: Svc, who: Who) -> list[rs.ReviewSummary]:
    """Open reviews of the caller's tenant, nearest SLA first."""
    return await rs.list_reviews(svc, who)


@router.post("/v1/reviews/{workflow_id:path}/decision", response_model=rs.DecisionOut,
             responses={**_AUTH, **_NOT_FOUND, **_INVALID,
                        403: {"model": rs.DecisionOut | Refusal,
                              "description": "refused cross_tenant, or a token's bad tenant"},
                        409: {"model": rs.DecisionOut | Refusal,
                              "description": "refused by the workflow, or "
                                             + KEY_REUSED[409]["description"]}})
async def post_decision(workflow_id: str, body: rs.DecisionIn, svc: Svc, who: Who,
                        idempotency_key: IdempotencyKey = None) -> JSONResponse:
    """Approve, reject or request info, for the request id and draft version the reviewer saw."""
    rs.known_shape(workflow_id)  # before the Idempotency-Key's route, which names it, is stored

    async def decide() -> JSONResponse:
        out = await rs.decide(svc, who, workflow_id, body)
        status = 200 if out.accepted else 403 if out.reason_code == "cross_tenant" else 409
        return JSONResponse(out.model_dump(mode="json"), status_code=status)

    return await once(svc, tenant=who.tenant, caller=who.reviewer,
                      route=f"POST /v1/reviews/{workflow_id}/decision",
                      key=idempotency_key, body=body, run=decide)


@router.get("/v1/reviews/{workflow_id:path}", responses={**_AUTH, **_NOT_FOUND, **_INVALID})
async def get_review(workflow_id: str, svc: Svc, who: Who) -> dict[str, Any]:
    """Draft, sources, unknowns, risk, validator flags, policy version, earlier decisions."""
    return await rs.review_detail(svc, who, workflow_id)

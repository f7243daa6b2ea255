"""For the review handshake tests: a review ticket once listed."""

from __future__ import annotations

from typing import Any

import httpx

from tests.eventually import eventually


async def listed_ticket(api: httpx.AsyncClient, headers: dict[str, str], wanted: str,
                        version: int = 1) -> dict[str, Any]:
    async def row() -> dict[str, Any] | None:
        rows = (await api.get("/v1/reviews", headers=headers)).json()
        return next((r for r in rows if r["workflow_id"] == wanted), None)

    found: dict[str, Any] = await eventually(
        row, f"{wanted} listed with the ticket of draft v{version}", timeout=20, interval=0.1,
        until=lambda r: r is not None and r["draft_version"] == version)
    return found

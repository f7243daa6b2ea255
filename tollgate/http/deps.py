"""What the HTTP routes share: settings, stores, limits, and a lazily connected Temporal client.

Built once per process by ``tollgate.http.app.build_services`` (or by a test), never at import.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import HTTPException, Request

from adapters.broker.cancel import within
from adapters.postgres.outbox import OutboxStore
from tollgate.config.settings import Settings
from tollgate.http.ratelimit import TenantRateLimiter

if TYPE_CHECKING:
    import asyncpg
    from temporalio.client import Client

    from tollgate.runtime.identity import Verifier

#: A Temporal client that cannot connect within this says so (503) instead of hanging a reviewer.
CONNECT_TIMEOUT_S = 5.0


class TemporalLink:
    """Connects on first use and again after a failure; intake never needs it."""

    def __init__(self, address: str, namespace: str,
                 env: Mapping[str, str] | None = None) -> None:
        self.address, self.namespace, self.env = address, namespace, env
        self._client: Client | None = None
        self._lock = asyncio.Lock()

    async def client(self) -> Client:
        from tollgate.runtime.client import build_client

        async with self._lock:
            if self._client is None:
                try:
                    self._client = await within(
                        build_client(self.address, self.namespace, env=self.env),
                        CONNECT_TIMEOUT_S)
                except (TimeoutError, RuntimeError, OSError) as exc:
                    raise HTTPException(503, "Temporal is unreachable; try again") from exc
            return self._client

    def forget(self) -> None:
        self._client = None


@dataclass
class Services:
    settings: Settings
    pool: asyncpg.Pool
    tenant_secrets: Mapping[str, str]
    limiter: TenantRateLimiter
    temporal: TemporalLink
    verifier: Verifier | None = None
    max_body: int = 1_048_576
    max_batch: int = 100
    clock: Callable[[], float] = time.time
    outbox: OutboxStore = field(init=False)

    def __post_init__(self) -> None:
        self.outbox = OutboxStore(self.pool)


def services(request: Request) -> Services:
    found: Services = request.app.state.services
    return found

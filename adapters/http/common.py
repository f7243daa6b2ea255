"""What every HTTP port shares: owning (or borrowing) an httpx client, and reading Retry-After.

One Retry-After reader for every target and model provider, so a 429 is honoured the same way
everywhere; each caller picks its own default for an absent or unreadable header.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

#: No 429 parks a record longer than this, whatever its header says.
MAX_RETRY_AFTER = 600.0
#: Connections a port keeps to its target at most (``TOLLGATE_TARGET_CONNECTIONS`` sets it for
#: the worker's ports). httpx's own default is 100, kept alive: after a burst every later call
#: scanned all of them (httpcore checks each pooled connection for expiry on every request, a
#: socket poll apiece), ≈ 0.65 ms of CPU per call with 25 idle (docs/performance.md, "Twelfth
#: session"). A call beyond them waits for one within its own timeout (ADR 0080).
DEFAULT_CONNECTIONS = 10


def retry_after(
    headers: Mapping[str, str], *, default: float, now: datetime | None = None
) -> float:
    """Seconds a 429 asked to wait: ``retry-after-ms`` (some model gateways), else
    ``Retry-After`` as delta-seconds or an HTTP-date (RFC 9110); header names in any case.

    Absent, negative, non-finite or unreadable values give ``default``; a date in the past, 0;
    anything over ``MAX_RETRY_AFTER`` is capped, so a bad header cannot park a record for a day.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms is not None:
        seconds = _seconds(ms, default=default * 1000, now=None) / 1000
    else:
        seconds = _seconds(lowered.get("retry-after"), default=default, now=now)
    return min(seconds, MAX_RETRY_AFTER)


def _seconds(value: str | None, *, default: float, now: datetime | None) -> float:
    if not value:
        return default
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return default
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            when = when.replace(tzinfo=UTC)
        return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
    if not math.isfinite(seconds) or seconds < 0:
        return default
    return seconds


class HttpPort:
    """Base of the httpx adapters: a base URL and a client that is closed only if it is ours,
    with at most ``connections`` connections to the target."""

    def __init__(
        self, base_url: str, *, timeout: float, client: httpx.AsyncClient | None = None,
        connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = httpx.Timeout(timeout)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(
            timeout=self._timeout,
            limits=httpx.Limits(max_connections=connections,
                                max_keepalive_connections=connections))

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

"""Per-tenant intake rate: a token bucket per tenant, in this process.

One service process is the embedded default; several replicas each enforce their own share
(documented in docs/api.md), which is good enough to stop one tenant flooding the intake.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class TenantRateLimiter:
    rate: float  # events per second, refilled continuously
    burst: float  # the bucket's size
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def take(self, tenant: str, count: int, now: float) -> float:
        """Take ``count`` tokens; 0.0 when allowed, else seconds until they would be there."""
        tokens, at = self._buckets.get(tenant, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if count <= tokens:
            self._buckets[tenant] = (tokens - count, now)
            return 0.0
        self._buckets[tenant] = (tokens, now)
        if count > self.burst:
            return math.inf
        return (count - tokens) / self.rate

"""Injected faults: what a stand-in does wrong on purpose, and the queue requests take them from."""

from __future__ import annotations

import threading
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FaultKind = Literal[
    "delay",
    "unavailable",
    "rate_limit",
    "reject",
    "malformed",
    "fail_after_write",
    "gateway_timeout",
    "bad_gateway_after_write",
    "hang_after_write",
    "drop_after_write",
    "lookup_delay",
]

#: ``ms`` when a fault names none.
DEFAULT_MS: dict[str, int] = {"delay": 1000, "hang_after_write": 30_000, "lookup_delay": 1000}


class Fault(BaseModel):
    """One injected fault: applies to the next ``times`` matching requests (``key``: only those
    for that idempotency key / customer id). ``lookup_delay_ms`` adds "receipt visible only
    later" to any fault that stores a message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: FaultKind
    times: int = Field(default=1, ge=1)
    key: str | None = None
    ms: int | None = Field(default=None, ge=0)
    retry_after: int | str = 1
    code: str = "rule_violation"
    lookup_delay_ms: int = Field(default=0, ge=0)

    @property
    def duration_s(self) -> float:
        return (self.ms if self.ms is not None else DEFAULT_MS.get(self.kind, 0)) / 1000

    @property
    def hidden_s(self) -> float:
        """How long a message stored under this fault stays invisible to lookups."""
        return self.duration_s if self.kind == "lookup_delay" else self.lookup_delay_ms / 1000


class FaultQueue:
    """FIFO of faults; each request takes the first one that matches its key. Thread-safe."""

    def __init__(self, kinds: frozenset[str]) -> None:
        self._kinds = kinds
        self._items: list[list[Any]] = []  # [fault, remaining]
        self._lock = threading.Lock()

    def check(self, fault: Fault) -> None:
        if fault.kind not in self._kinds:
            raise ValueError(f"fault {fault.kind!r} is not supported here: {sorted(self._kinds)}")

    def push(self, fault: Fault) -> None:
        self.check(fault)
        with self._lock:
            self._items.append([fault, fault.times])

    def take(self, key: str | None) -> Fault | None:
        with self._lock:
            for item in self._items:
                fault: Fault = item[0]
                if fault.key is None or fault.key == key:
                    item[1] -= 1
                    if item[1] == 0:
                        self._items.remove(item)
                    return fault
        return None

    def clear(self) -> int:
        with self._lock:
            cleared, self._items = len(self._items), []
        return cleared

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return [{**f.model_dump(), "remaining": n} for f, n in self._items]

"""The base of a stand-in target (``StandIn``): lifecycle on a loopback runner, a fault queue
and the ``/_faults`` admin routes. The runner lives in ``runner.py``, the faults in
``faults.py``; the stand-ins import their names from there.
"""

from __future__ import annotations

import threading
from typing import ClassVar, Self

from tollgate.dev.standins.faults import Fault, FaultKind, FaultQueue
from tollgate.dev.standins.runner import HttpError, Request, Response, StandInServer

__all__ = ["StandIn"]


class StandIn:
    """Base of a stand-in target: lifecycle, fault queue and the ``/_faults`` admin routes."""

    fault_kinds: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.faults = FaultQueue(self.fault_kinds)
        self._runner = StandInServer(self, host=host, port=port)
        self._stopping = threading.Event()

    @property
    def url(self) -> str:
        return self._runner.url

    @property
    def port(self) -> int:
        return self._runner.port

    @property
    def is_up(self) -> bool:
        return self._runner.is_up

    def start(self) -> Self:
        self._stopping.clear()
        self._runner.up()
        return self

    def down(self) -> None:
        self._runner.down()

    def up(self) -> None:
        self._runner.up()

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a delay/hang fault
        self._runner.down()
        self.close_store()

    def close_store(self) -> None:
        """Releases the stand-in's store file, if it has one (its records stay readable)."""

    def inject(
        self,
        kind: FaultKind,
        *,
        times: int = 1,
        key: str | None = None,
        ms: int | None = None,
        retry_after: int | str = 1,
        code: str = "rule_violation",
        lookup_delay_ms: int = 0,
    ) -> Fault:
        fault = Fault(
            kind=kind, times=times, key=key, ms=ms, retry_after=retry_after, code=code,
            lookup_delay_ms=lookup_delay_ms,
        )  # fmt: skip
        self.faults.push(fault)
        return fault

    def clear_faults(self) -> int:
        return self.faults.clear()

    def pause(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def handle(self, request: Request) -> Response:
        if request.path != "/_faults":
            return self.route(request)
        if request.method == "DELETE":
            return Response(200, {"cleared": self.faults.clear()})
        if request.method == "POST":
            body = request.json()
            try:  # validate the whole batch before queueing any of it
                items = body if isinstance(body, list) else [body]
                batch = [Fault.model_validate(item) for item in items]
                for fault in batch:
                    self.faults.check(fault)
            except ValueError as exc:  # pydantic's ValidationError is a ValueError
                raise HttpError(400, "bad_fault", str(exc).splitlines()[0]) from None
            for fault in batch:
                self.faults.push(fault)
            return Response(201, {"pending": self.faults.pending()})
        if request.method == "GET":
            return Response(200, {"pending": self.faults.pending()})
        raise HttpError(405, "method_not_allowed")

    def route(self, request: Request) -> Response:
        raise NotImplementedError

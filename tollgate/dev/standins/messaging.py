"""Messaging stand-in: a send API that dedupes by ``Idempotency-Key`` and can be looked up by it,
or, in the non-deduping mode, stores every POST as a new message (as many SMS and e-mail APIs do).

    POST /messages                 Idempotency-Key required (400 without); body
                                   {tenant_id, recipient_ref, channel, body, correlation_id}
                                   -> 201 message (first time) | 200 the SAME stored message
    GET  /messages/by-key/{key}    -> 200 message | 404 (also 404 while a lookup_delay hides it)
    GET  /messages?tenant_id=...   -> 200 [message, ...] (oldest first)
    GET  /messages/count           -> 200 {"count": stored, "post_attempts": POSTs received}
    POST /_reset                   -> 200 {} (messages, counters and faults cleared)
    POST /_mode {"dedupe": bool}   -> 200 {"dedupe": bool}; false: every POST stores a new message
                                   (201 each time), by-key lookups answer the first one
    POST|GET|DELETE /_faults       fault queue (see ``server.StandIn``)

    message = {id, idempotency_key, status: "accepted", tenant_id, recipient_ref, channel, body,
               correlation_id, created_at}

Faults apply to POSTs, in queue order, each to its next ``times`` POSTs (optionally one key):
``delay`` (sleep, then normal), ``rate_limit`` (429 + Retry-After, nothing stored),
``unavailable`` (503, nothing stored), ``reject`` (422 business rule, nothing stored),
``fail_after_write`` (stored, 504), ``gateway_timeout`` (504, nothing stored: a gateway gave
up before the service took the request), ``bad_gateway_after_write`` (stored, 502),
``hang_after_write`` (stored, then sleeps past the client's timeout), ``drop_after_write``
(stored, connection closed without an answer) and ``lookup_delay`` (stored, invisible to
by-key lookups for ``ms``). The recipient is a reference the target resolves, as a real
provider resolves a contact id, so no phone number ever passes through Tollgate.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tollgate.dev.standins.faults import Fault
from tollgate.dev.standins.runner import HttpError, Request, Response
from tollgate.dev.standins.server import StandIn
from tollgate.dev.standins.store import RecordStore

_FIELDS = ("tenant_id", "recipient_ref", "channel", "body", "correlation_id")
_STORING = frozenset(
    {"fail_after_write", "bad_gateway_after_write", "hang_after_write", "drop_after_write"}
)


class MessagingStandIn(StandIn):
    fault_kinds = frozenset(
        {"delay", "rate_limit", "unavailable", "gateway_timeout", "reject", "lookup_delay",
         *_STORING}
    )
    # What a keyed-write target stores; the helpdesk stand-in (helpdesk.py) is the same target
    # with other records.
    collection = "messages"
    fields: tuple[str, ...] = _FIELDS
    optional_fields: tuple[str, ...] = ()
    id_prefix = "msg"

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, path: Path | None = None,
                 dedupe: bool = True) -> None:
        """``path``: the SQLite file that keeps messages (by key) across restarts (None: memory).
        ``dedupe``: False makes every POST store a new message, as many real send APIs do."""
        super().__init__(host=host, port=port)
        self._dedupe_default = self.dedupe = dedupe
        # One lock over messages and counters: ThreadingHTTPServer runs handlers concurrently,
        # and "same key twice stores once" must hold under a burst of concurrent POSTs.
        self._lock = threading.Lock()
        self._by_key = RecordStore(path)  # idempotency key -> message
        self._visible_at: dict[str, float] = {}  # monotonic time a lookup_delay lifts
        self._post_attempts = 0
        # Non-deduping mode only: second and later copies of a key (a real double send).
        self._copies: list[dict[str, Any]] = []
        self._posts_by_key: dict[str, int] = {}

    # --- Python API (tests, demo) -----------------------------------------------------------

    @property
    def message_count(self) -> int:
        with self._lock:
            return len(self._by_key) + len(self._copies)

    @property
    def post_attempts(self) -> int:
        with self._lock:
            return self._post_attempts

    def posts_for(self, key: str) -> int:
        """POSTs received with this idempotency key, whatever they were answered."""
        with self._lock:
            return self._posts_by_key.get(key, 0)

    def messages(self, tenant_id: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            found = [*self._by_key.values(), *self._copies]
        return [dict(m) for m in found if tenant_id is None or m["tenant_id"] == tenant_id]

    def get_by_key(self, key: str, *, as_lookup: bool = False) -> dict[str, Any] | None:
        """The stored message; ``as_lookup=True`` honours a pending ``lookup_delay``."""
        with self._lock:
            message = self._by_key.get(key)
            hidden = as_lookup and time.monotonic() < self._visible_at.get(key, 0.0)
        return None if message is None or hidden else dict(message)

    def reset(self) -> None:
        self.clear_faults()
        with self._lock:
            self._by_key.clear()
            self._visible_at.clear()
            self._post_attempts = 0
            self._copies.clear()
            self._posts_by_key.clear()
        self.dedupe = self._dedupe_default

    def close_store(self) -> None:
        self._by_key.close()

    # --- HTTP -------------------------------------------------------------------------------

    def route(self, request: Request) -> Response:
        parts = request.segments()
        if request.method == "POST" and parts == [self.collection]:
            return self._post(request)
        if request.method == "POST" and parts == ["_reset"]:
            self.reset()
            return Response(200, {})
        if request.method == "POST" and parts == ["_mode"]:
            mode = request.json()
            if not isinstance(mode, dict) or not isinstance(mode.get("dedupe"), bool):
                raise HttpError(400, "bad_request", "body must be {\"dedupe\": true|false}")
            self.dedupe = mode["dedupe"]
            return Response(200, {"dedupe": self.dedupe})
        if request.method != "GET" or not parts or parts[0] != self.collection:
            raise HttpError(404, "not_found")
        if parts == [self.collection]:
            return Response(200, self.messages(request.query.get("tenant_id")))
        if parts == [self.collection, "count"]:
            with self._lock:
                count, attempts = len(self._by_key) + len(self._copies), self._post_attempts
            return Response(200, {"count": count, "post_attempts": attempts})
        if len(parts) == 3 and parts[1] == "by-key":
            message = self.get_by_key(parts[2], as_lookup=True)
            if message is None:
                raise HttpError(404, "not_found")
            return Response(200, message)
        raise HttpError(404, "not_found")

    def _post(self, request: Request) -> Response:
        with self._lock:
            self._post_attempts += 1
        key = request.header("Idempotency-Key")
        if not key:
            raise HttpError(400, "missing_idempotency_key")
        with self._lock:
            self._posts_by_key[key] = self._posts_by_key.get(key, 0) + 1
        payload = request.json()
        if not isinstance(payload, dict):
            raise HttpError(400, "bad_request", "body must be a JSON object")
        for name in self.fields:
            if not isinstance(payload.get(name), str) or not payload[name]:
                raise HttpError(400, "bad_request", f"{name} must be a non-empty string")
        for name in self.optional_fields:
            if not isinstance(payload.get(name), str | None):
                raise HttpError(400, "bad_request", f"{name} must be a string or null")

        fault = self.faults.take(key)
        kind = fault.kind if fault else None
        if fault and kind == "delay":
            self.pause(fault.duration_s)
        elif fault and kind == "rate_limit":
            return Response(429, {"error": "rate_limited"}, {"Retry-After": str(fault.retry_after)})
        elif kind == "unavailable":
            return Response(503, {"error": "unavailable"})
        elif kind == "gateway_timeout":  # an unknown write to the caller; nothing stored
            return Response(504, {"error": "gateway_timeout"})
        elif fault and kind == "reject":
            return Response(422, {"error": "business_rule", "code": fault.code})

        message, created = self._store(key, payload, fault)
        if kind == "fail_after_write":
            return Response(504, {"error": "gateway_timeout"})
        if kind == "bad_gateway_after_write":
            return Response(502, {"error": "bad_gateway"})
        if kind == "drop_after_write":
            return Response(0, drop=True)
        if fault and kind == "hang_after_write":
            self.pause(fault.duration_s)  # the client has given up by now; answering is moot
        return Response(201 if created else 200, message)

    def _store(
        self, key: str, payload: dict[str, Any], fault: Fault | None
    ) -> tuple[dict[str, Any], bool]:
        hide_s = fault.hidden_s if fault is not None else 0.0
        with self._lock:
            existing = self._by_key.get(key)
            if existing is not None and self.dedupe:
                return dict(existing), False
            message = {
                "id": f"{self.id_prefix}_{uuid.uuid4().hex[:16]}",
                "idempotency_key": key,
                "status": "accepted",
                **{name: payload[name] for name in self.fields},
                **{name: payload.get(name) for name in self.optional_fields},
                "created_at": datetime.now(UTC).isoformat(),
            }
            if existing is not None:  # not deduping: the key is a label, the copy a second send
                self._copies.append(message)
                return dict(message), True
            self._by_key.put(key, message)
            if hide_s:
                self._visible_at[key] = time.monotonic() + hide_s
            return dict(message), True

"""CRM stand-in: the system of record for customers, keyed by (tenant_id, customer_id).

    GET /tenants/{tenant}/customers/{id}  -> 200 CustomerRecord JSON | 404
    PUT /tenants/{tenant}/customers/{id}  upsert; fields left out keep their stored value and
                                          ``updated_at`` defaults to now -> 201 created | 200
    POST|GET|DELETE /_faults              fault queue (see ``server.StandIn``)

Faults apply to reads (GET), optionally for one customer id: ``delay`` (sleep, then normal),
``unavailable`` (503), ``rate_limit`` (429 + Retry-After) and ``malformed`` (200 with a body
that is not a record). ``down()``/``up()`` come from the runner.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from adapters.standins.server import HttpError, Request, Response, StandIn
from contracts import CustomerRecord

#: (tenant, customer, first_name, pet_name, consent) loaded by ``seed_demo``.
DEMO_CUSTOMERS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("acme", "C-1001", "Lan", "Miu", True),
    ("acme", "C-1002", "Minh", "Bong", False),  # consent revoked: the demo must never send
    ("globex", "C-2001", "Ana", "Rex", True),
)


class CrmStandIn(StandIn):
    fault_kinds = frozenset({"delay", "unavailable", "rate_limit", "malformed"})

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        super().__init__(host=host, port=port)
        self._lock = threading.Lock()
        self._customers: dict[tuple[str, str], CustomerRecord] = {}

    # --- Python API (tests, demo) -----------------------------------------------------------

    def upsert(
        self,
        tenant_id: str,
        customer_id: str,
        *,
        first_name: str,
        consent_messaging: bool,
        locale: str = "en",
        pet_name: str | None = None,
        updated_at: datetime | None = None,
    ) -> CustomerRecord:
        record = CustomerRecord(
            tenant_id=tenant_id,
            customer_id=customer_id,
            first_name=first_name,
            locale=locale,
            pet_name=pet_name,
            consent_messaging=consent_messaging,
            updated_at=updated_at or datetime.now(UTC),
        )
        with self._lock:
            self._customers[(tenant_id, customer_id)] = record
        return record

    def set_consent(
        self, tenant_id: str, customer_id: str, consent: bool, *, at: datetime | None = None
    ) -> CustomerRecord:
        """Changes consent at the source of truth; it is a change, so ``updated_at`` moves."""
        with self._lock:
            current = self._customers.get((tenant_id, customer_id))
            if current is None:
                raise KeyError(f"no customer {customer_id} in tenant {tenant_id}")
            record = current.model_copy(
                update={"consent_messaging": consent, "updated_at": at or datetime.now(UTC)}
            )
            self._customers[(tenant_id, customer_id)] = record
        return record

    def get(self, tenant_id: str, customer_id: str) -> CustomerRecord | None:
        with self._lock:
            return self._customers.get((tenant_id, customer_id))

    def remove(self, tenant_id: str, customer_id: str) -> None:
        with self._lock:
            self._customers.pop((tenant_id, customer_id), None)

    def seed_demo(self, now: datetime | None = None) -> list[CustomerRecord]:
        """Loads the demo customers, all last updated one day before ``now``."""
        updated_at = (now or datetime.now(UTC)) - timedelta(days=1)
        return [
            self.upsert(
                tenant,
                customer,
                first_name=first,
                pet_name=pet,
                consent_messaging=consent,
                updated_at=updated_at,
            )
            for tenant, customer, first, pet, consent in DEMO_CUSTOMERS
        ]

    # --- HTTP -------------------------------------------------------------------------------

    def route(self, request: Request) -> Response:
        parts = request.segments()
        if len(parts) != 4 or parts[0] != "tenants" or parts[2] != "customers":
            raise HttpError(404, "not_found")
        tenant_id, customer_id = parts[1], parts[3]
        if request.method == "GET":
            return self._read(tenant_id, customer_id)
        if request.method == "PUT":
            return self._write(tenant_id, customer_id, request.json())
        raise HttpError(405, "method_not_allowed")

    def _read(self, tenant_id: str, customer_id: str) -> Response:
        fault = self.faults.take(customer_id)
        if fault and fault.kind == "delay":
            self.pause(fault.duration_s)
        elif fault and fault.kind == "unavailable":
            return Response(503, {"error": "unavailable"})
        elif fault and fault.kind == "rate_limit":
            return Response(429, {"error": "rate_limited"}, {"Retry-After": str(fault.retry_after)})
        elif fault and fault.kind == "malformed":
            return Response(200, raw=b'{"tenant_id": "' + tenant_id.encode() + b'", "first_')
        record = self.get(tenant_id, customer_id)
        if record is None:
            raise HttpError(404, "not_found")
        return Response(200, record.model_dump(mode="json"))

    def _write(self, tenant_id: str, customer_id: str, body: Any) -> Response:
        if not isinstance(body, dict):
            raise HttpError(400, "bad_request", "body must be a JSON object")
        if (
            body.get("tenant_id", tenant_id) != tenant_id
            or body.get("customer_id", customer_id) != customer_id
        ):
            raise HttpError(400, "bad_request", "ids in the body must match the path")
        # Hold the lock across read-merge-write so two concurrent PUTs cannot lose a field.
        with self._lock:
            current = self._customers.get((tenant_id, customer_id))
            merged: dict[str, Any] = current.model_dump(mode="json") if current else {}
            merged.update(body, tenant_id=tenant_id, customer_id=customer_id)
            merged["updated_at"] = body.get("updated_at") or datetime.now(UTC).isoformat()
            try:
                record = CustomerRecord.model_validate(merged)
            except ValidationError as exc:
                fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
                raise HttpError(400, "bad_request", f"invalid fields: {fields}") from None
            self._customers[(tenant_id, customer_id)] = record
        return Response(200 if current else 201, record.model_dump(mode="json"))

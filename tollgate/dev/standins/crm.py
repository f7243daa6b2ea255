"""CRM stand-in: the system of record for customers, keyed by (tenant_id, customer_id).

    GET /tenants/{tenant}/customers/{id}  -> 200 record JSON (crm_record.py) | 404
    PUT /tenants/{tenant}/customers/{id}  upsert; fields left out keep their stored value and
                                          ``updated_at`` defaults to now -> 201 created | 200
    POST|GET|DELETE /_faults              fault queue (see ``server.StandIn``)

Faults apply to reads (GET), optionally for one customer id: ``delay`` (sleep, then normal),
``unavailable`` (503), ``rate_limit`` (429 + Retry-After), ``reject`` (403: this customer's
record is not to be read, e.g. a revoked grant) and ``malformed`` (200 with a body that is not a
record). ``down()``/``up()`` come from the runner. Given a ``path``, the
customers live in that SQLite file (``store.py``) and survive a restart.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tollgate.dev.standins.crm_record import DEMO_CUSTOMERS, CrmRecord
from tollgate.dev.standins.runner import HttpError, Request, Response
from tollgate.dev.standins.server import StandIn
from tollgate.dev.standins.store import RecordStore


def _key(tenant_id: str, customer_id: str) -> str:
    return json.dumps([tenant_id, customer_id])  # unambiguous whatever the ids contain


class CrmStandIn(StandIn):
    fault_kinds = frozenset({"delay", "unavailable", "rate_limit", "reject", "malformed"})

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, path: Path | None = None) -> None:
        """``path``: the SQLite file that keeps the customers across restarts (None: memory)."""
        super().__init__(host=host, port=port)
        self.store = RecordStore(path)

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
        **contact: str | None,
    ) -> CrmRecord:
        """Replaces the whole record; ``contact``: ``notes``, ``phone``, ``email``, ``address``."""
        record = CrmRecord(
            tenant_id=tenant_id,
            customer_id=customer_id,
            first_name=first_name,
            locale=locale,
            pet_name=pet_name,
            consent_messaging=consent_messaging,
            updated_at=updated_at or datetime.now(UTC),
            **contact,
        )
        self.store.put(_key(tenant_id, customer_id), record.model_dump(mode="json"))
        return record

    def set_consent(
        self, tenant_id: str, customer_id: str, consent: bool, *, at: datetime | None = None
    ) -> CrmRecord:
        """Changes consent at the source of truth; it is a change, so ``updated_at`` moves."""
        with self.store.lock:
            current = self.get(tenant_id, customer_id)
            if current is None:
                raise KeyError(f"no customer {customer_id} in tenant {tenant_id}")
            record = current.model_copy(
                update={"consent_messaging": consent, "updated_at": at or datetime.now(UTC)}
            )
            self.store.put(_key(tenant_id, customer_id), record.model_dump(mode="json"))
        return record

    def get(self, tenant_id: str, customer_id: str) -> CrmRecord | None:
        found = self.store.get(_key(tenant_id, customer_id))
        return CrmRecord.model_validate(found) if found is not None else None

    def remove(self, tenant_id: str, customer_id: str) -> None:
        self.store.delete(_key(tenant_id, customer_id))

    def seed_demo(self, now: datetime | None = None) -> list[CrmRecord]:
        """Loads the demo customers, all last updated one hour before ``now``: fresh for a policy
        whose freshness is one day (a seed exactly a day old went stale as the stack started)."""
        updated_at = (now or datetime.now(UTC)) - timedelta(hours=1)
        records = [CrmRecord.model_validate({**c, "updated_at": updated_at})
                   for c in DEMO_CUSTOMERS]
        for record in records:
            self.store.put(_key(record.tenant_id, record.customer_id),
                           record.model_dump(mode="json"))
        return records

    def close_store(self) -> None:
        self.store.close()

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
        elif fault and fault.kind == "reject":
            return Response(403, {"error": "forbidden"})
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
        with self.store.lock:
            current = self.store.get(_key(tenant_id, customer_id))
            merged: dict[str, Any] = dict(current or {})
            merged.update(body, tenant_id=tenant_id, customer_id=customer_id)
            merged["updated_at"] = body.get("updated_at") or datetime.now(UTC).isoformat()
            try:
                record = CrmRecord.model_validate(merged)
            except ValidationError as exc:
                fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
                raise HttpError(400, "bad_request", f"invalid fields: {fields}") from None
            self.store.put(_key(tenant_id, customer_id), record.model_dump(mode="json"))
        return Response(200 if current else 201, record.model_dump(mode="json"))

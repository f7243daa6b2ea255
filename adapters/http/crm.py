"""Reads the minimal customer record from the CRM over HTTP (``ContextSource``).

    GET {base}/tenants/{tenant}/customers/{id}
    200 readable record        CustomerRecord
    404                        None (the activity decides what a missing source means)
    429                        RateLimited(retry_after from Retry-After)
    5xx, timeouts, connect     RetryableError          the CRM cannot answer now
    200 unreadable             RetryableError("crm_bad_response"); never a record with guesses
    200 for another record     SecurityIncident("crm_record_mismatch"); cross-tenant data must
                               never reach a draft
    other statuses             DeadLetterError("crm_<status>"); 401/403/400 need an operator,
                               retrying will not fix them

A read has no side effect, so every failure to get an answer is simply retryable. Fields the
contract does not know are ignored (the CRM may grow); fields it needs must be present and of the
right type: ``consent_messaging`` must be a JSON boolean, since "yes" or 1 decides nothing.
The free-text and contact fields (``notes``, ``phone``, ``email``, ``address``) are optional and
mapped as they come; a blank one is read as absent. Which of them reach a draft is the policy's
call (``PolicyRule.context_fields``), not this adapter's.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from pydantic import ValidationError

from adapters.http.common import DEFAULT_CONNECTIONS, HttpPort, retry_after
from contracts import CustomerRecord
from contracts.errors import DeadLetterError, RateLimited, RetryableError, SecurityIncident

_KNOWN_FIELDS = frozenset(CustomerRecord.model_fields)
_OPTIONAL_TEXT = ("notes", "phone", "email", "address", "pet_name")


class CrmHttpSource(HttpPort):
    name = "crm"

    def __init__(
        self, base_url: str, *, timeout: float = 5.0, client: httpx.AsyncClient | None = None,
        connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        super().__init__(base_url, timeout=timeout, client=client, connections=connections)

    async def fetch_customer(self, tenant_id: str, customer_id: str) -> CustomerRecord | None:
        tenant, customer = quote(tenant_id, safe=""), quote(customer_id, safe="")
        url = f"{self._base}/tenants/{tenant}/customers/{customer}"
        try:
            response = await self._client.get(url, timeout=self._timeout)
        except httpx.TimeoutException as exc:
            raise RetryableError("crm_timeout", type(exc).__name__) from exc
        except httpx.RequestError as exc:
            raise RetryableError("crm_unreachable", type(exc).__name__) from exc

        status = response.status_code
        if status == 404:
            return None
        if status == 429:
            delay = retry_after(response.headers, default=1.0)
            raise RateLimited("crm_rate_limited", retry_after=delay)
        if status >= 500:
            raise RetryableError(f"crm_{status}", f"CRM answered {status}")
        if status != 200:
            raise DeadLetterError(f"crm_{status}", f"CRM answered {status}")

        record = _parse_record(response)
        if record.tenant_id != tenant_id or record.customer_id != customer_id:
            raise SecurityIncident("crm_record_mismatch", "CRM returned a different record")
        return record


def _parse_record(response: httpx.Response) -> CustomerRecord:
    try:
        data: Any = response.json()
    except ValueError:
        raise RetryableError("crm_bad_response", "CRM body is not JSON") from None
    if not isinstance(data, dict):
        raise RetryableError("crm_bad_response", "CRM body is not an object")
    if not isinstance(data.get("consent_messaging"), bool):
        raise RetryableError("crm_bad_response", "consent_messaging is not a boolean")
    known = {k: v for k, v in data.items() if k in _KNOWN_FIELDS}
    for field in _OPTIONAL_TEXT:
        if isinstance(known.get(field), str) and not known[field].strip():
            known[field] = None
    try:
        return CustomerRecord.model_validate(known)
    except ValidationError as exc:
        # Field names only: the values are customer data.
        fields = sorted({str(e["loc"][0]) for e in exc.errors() if e["loc"]})
        raise RetryableError("crm_bad_response", f"invalid fields: {fields}") from None

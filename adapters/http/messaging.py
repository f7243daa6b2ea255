"""Messaging over HTTP: one POST per action, keyed by ``Idempotency-Key: <action_key>``.

How an outcome is classified is the core of the side-effect safety story. The question is
always "could the target have taken this message?"; when the answer is "maybe", the write is
unknown and goes to the reconciler, which looks the key up instead of sending again blind.

    ConnectError, ConnectTimeout, PoolTimeout     TimeoutBeforeWrite  no byte left the process
    ReadTimeout, WriteTimeout, RemoteProtocolError,
    any other request error                       UnknownWrite        the request may have landed
    2xx with a readable body                      TargetWrite
    2xx with an unreadable body                   UnknownWrite        it landed; receipt unread
    409 (already exists)                          TargetWrite via lookup(key) ("already exists"
                                                  is success); UnknownWrite if lookup cannot say
    429                                           RateLimited(retry_after: Retry-After seconds or
                                                  HTTP-date, 1 s when absent or unreadable)
    503                                           RetryableError      see below
    502, 504, other 5xx, 1xx/3xx                  UnknownWrite        reached something upstream
    400, 422, other 4xx                           RejectedError(code="target_<status>")

503 is retried rather than reconciled: it says the service did not take the request, and even
if a broken proxy answered 503 after the write, resending with the same key is harmless because
this target dedupes by key (``dedupes_by_key``). Declared without dedupe (``TOLLGATE_TARGETS``),
a 503 to the send is an unknown write instead.

The recipient is ``ref.entity_id``: the target resolves the address, so no phone number or
e-mail passes through Tollgate. Exception messages carry status codes and error names only:
never the body, the recipient or a header value (the idempotency key included).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx

from adapters.http.common import DEFAULT_CONNECTIONS, HttpPort, retry_after
from adapters.ports.targets import TargetWrite
from contracts import ActionRequest, TargetCapabilities
from contracts.errors import (
    RateLimited,
    RejectedError,
    RetryableError,
    TimeoutBeforeWrite,
    UnknownWrite,
)

DEFAULT_RETRY_AFTER = 1.0
_SAFE_CODE = re.compile(r"[A-Za-z0-9_.\-]{1,64}")


class MessagingHttpAdapter(HttpPort):
    name = "messaging"
    #: Where keyed writes go (``POST /{collection}``, ``GET /{collection}/by-key/{key}``); the
    #: helpdesk adapter is the same keyed-write protocol with other records (helpdesk.py).
    collection = "messages"

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = 10.0,
        client: httpx.AsyncClient | None = None,
        capabilities: TargetCapabilities | None = None,
        connections: int = DEFAULT_CONNECTIONS,
    ) -> None:
        super().__init__(base_url, timeout=timeout, client=client, connections=connections)
        # The service's API has both; a deployment in front of it may not (declared per target).
        declared = capabilities or TargetCapabilities(lookup=True, dedupe=True)
        self.supports_lookup = declared.lookup
        self.dedupes_by_key = declared.dedupe

    def payload(self, request: ActionRequest) -> dict[str, Any]:
        """The JSON body of the one POST for ``request``."""
        return {
            "tenant_id": request.ref.tenant_id,
            "recipient_ref": request.ref.entity_id,
            "channel": request.channel,
            "body": request.body,
            "correlation_id": request.ref.correlation_id,
        }

    async def execute(self, request: ActionRequest) -> TargetWrite:
        key = request.action_key
        body = self.payload(request)
        name = self.name
        try:
            response = await self._client.post(
                f"{self._base}/{self.collection}",
                json=body,
                headers={"Idempotency-Key": key},
                timeout=self._timeout,
            )
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise TimeoutBeforeWrite(
                f"{name}_unreachable", f"{type(exc).__name__}: nothing was sent"
            ) from exc
        except httpx.RequestError as exc:
            # Anything else may have happened after the request left: when in doubt, unknown.
            raise UnknownWrite(
                f"{name}_no_answer", f"{type(exc).__name__} after the request was sent"
            ) from exc

        status = response.status_code
        if 200 <= status < 300:
            write = _parse_write(response, key)
            if write is None:
                raise UnknownWrite(f"{name}_bad_response", f"unreadable {status} body")
            return write
        if status == 409:
            return await self._already_exists(key)
        if status == 429:
            delay = retry_after(response.headers, default=DEFAULT_RETRY_AFTER)
            raise RateLimited(f"{self.name}_rate_limited", retry_after=delay)
        if status == 503 and not self.dedupes_by_key:
            raise UnknownWrite(f"{name}_503", "target answered 503 to the send")
        if status == 503:
            raise RetryableError(f"{name}_503", "target unavailable; safe to resend same key")
        if 400 <= status < 500:
            raise RejectedError(f"target_{status}", _rejection_message(response))
        raise UnknownWrite(f"{name}_{status}", f"target answered {status} to the send")

    async def lookup(self, idempotency_key: str) -> TargetWrite | None:
        try:
            response = await self._client.get(
                f"{self._base}/{self.collection}/by-key/{quote(idempotency_key, safe='')}",
                timeout=self._timeout,
            )
        except httpx.RequestError as exc:
            raise RetryableError(f"{self.name}_lookup_failed", type(exc).__name__) from exc
        status = response.status_code
        if status == 404:
            return None
        if status == 429:
            delay = retry_after(response.headers, default=DEFAULT_RETRY_AFTER)
            raise RateLimited(f"{self.name}_rate_limited", retry_after=delay)
        if status != 200:
            raise RetryableError(f"{self.name}_lookup_failed", f"target answered {status}")
        write = _parse_write(response, idempotency_key)
        if write is None:
            raise RetryableError(f"{self.name}_bad_response", "unreadable lookup body")
        return write

    async def _already_exists(self, key: str) -> TargetWrite:
        # 409 says the target holds this key; fetch the receipt instead of trusting a guess.
        try:
            write = await self.lookup(key)
        except RetryableError:
            write = None
        if write is None:
            raise UnknownWrite(f"{self.name}_409_unconfirmed", "409 but the key could not be read")
        # Success, but said so: the circuit counts a target holding a key it was never sent.
        return write.model_copy(update={"status": "already_held"})


def _parse_write(response: httpx.Response, key: str) -> TargetWrite | None:
    """The target's receipt, or None when the body is not one for this key."""
    try:
        data: Any = response.json()
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    external_id, echoed_key = data.get("id"), data.get("idempotency_key")
    status = data.get("status", "accepted")
    if not (isinstance(external_id, str) and external_id) or echoed_key != key:
        return None
    if not isinstance(status, str):
        return None
    return TargetWrite(idempotency_key=key, external_id=external_id, status=status)


def _rejection_message(response: httpx.Response) -> str:
    """Names the target's own reason code when it is a plain token; nothing else is echoed."""
    try:
        data = response.json()
    except ValueError:
        data = None
    code = data.get("code") if isinstance(data, dict) else None
    if isinstance(code, str) and _SAFE_CODE.fullmatch(code):
        return f"target rejected the send ({code})"
    return f"target rejected the send ({response.status_code})"

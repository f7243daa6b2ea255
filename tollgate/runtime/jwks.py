"""An OpenID issuer's signing keys: found through discovery, held by ``kid``, refreshed when a
token names a key not held — at most once per cooldown, so a flood of made-up ``kid`` values
costs the issuer one request, not one each (ADR 0036).

Discovery (OpenID Connect Discovery 1.0, section 4) reads
``{issuer}/.well-known/openid-configuration`` and takes its ``jwks_uri`` only when the document
names exactly the configured issuer: a document for another issuer would hand us its keys.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt

from adapters.broker.cancel import raise_if_cancel_pending
from contracts.identity import IdentityRefused

#: Discovery documents and key sets are a few KiB; a larger answer is refused unread.
MAX_DOCUMENT_BYTES = 256 * 1024
DISCOVERY_PATH = "/.well-known/openid-configuration"
#: What a JWK without ``alg`` may sign with, by key type (RFC 7518): an RSA key serves RS256
#: and PS256, a P-256 key ES256 only.
_BY_KEY_TYPE: dict[tuple[str, str], tuple[str, ...]] = {
    ("RSA", ""): ("RS256", "PS256"), ("EC", "P-256"): ("ES256",)}


@dataclass(frozen=True)
class HeldKey:
    key: Any
    algorithms: tuple[str, ...]


@dataclass
class KeySet:
    issuer: str
    #: The JWKS URL when configured; unset, discovery finds it (and remembers it).
    jwks_url: str | None = None
    #: Least seconds between two fetches that a token's unknown ``kid`` may cause.
    cooldown_s: float = 30.0
    timeout_s: float = 5.0
    transport: httpx.AsyncBaseTransport | None = None
    held: dict[str, HeldKey] = field(default_factory=dict)
    #: How many times the key set was fetched (what the rate limit bounds; tests read it).
    fetches: int = 0
    _fetched_at: float | None = field(default=None, repr=False)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)

    async def key_for(self, kid: str) -> HeldKey | None:
        """The key ``kid`` names: held, or held after one refresh the cooldown allows."""
        if kid not in self.held:
            await self.refresh(force=False)
        return self.held.get(kid)

    async def refresh(self, *, force: bool = True) -> None:
        """Fetch the current keys. Unforced, a fetch within the cooldown of the last is skipped;
        a failed fetch keeps the keys held and counts against the cooldown too."""
        async with self._lock:
            now = time.monotonic()
            if (not force and self._fetched_at is not None
                    and now - self._fetched_at < self.cooldown_s):
                return
            self._fetched_at, self.fetches = now, self.fetches + 1
            async with httpx.AsyncClient(timeout=self.timeout_s, transport=self.transport,
                                         follow_redirects=False) as http:
                try:
                    url = self.jwks_url or await self._discover(http)
                    self.held = _parse(await _document(http, url))
                except (httpx.HTTPError, ValueError) as exc:
                    raise IdentityRefused("keys_unavailable", "the issuer's signing keys could "
                                          f"not be fetched ({type(exc).__name__})") from None
            if not self.jwks_url:
                self.jwks_url = url

    async def keep_fresh(self, every_s: float) -> None:
        """Refetch every ``every_s`` until cancelled, so a process that only verifies without
        I/O (the workflow validator) follows a rollover too; a failed fetch keeps the keys."""
        while True:
            raise_if_cancel_pending()  # a cancel a library swallowed (adapters/broker/cancel.py)
            await asyncio.sleep(every_s)
            try:
                await self.refresh(force=True)
            except IdentityRefused:
                continue

    async def _discover(self, http: httpx.AsyncClient) -> str:
        found = await _document(http, self.issuer.rstrip("/") + DISCOVERY_PATH)
        if found.get("issuer") != self.issuer:
            raise ValueError("the discovery document names another issuer")
        uri = found.get("jwks_uri")
        if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
            raise ValueError("the discovery document has no jwks_uri")
        return uri


async def _document(http: httpx.AsyncClient, url: str) -> dict[str, Any]:
    async with http.stream("GET", url, headers={"Accept": "application/json"}) as answer:
        answer.raise_for_status()
        body = b""
        async for chunk in answer.aiter_bytes():
            body += chunk
            if len(body) > MAX_DOCUMENT_BYTES:
                raise ValueError("the issuer's answer is too large")
    parsed = httpx.Response(200, content=body).json()
    if not isinstance(parsed, dict):
        raise ValueError("the issuer's answer is not a JSON object")
    return parsed


def _parse(document: dict[str, Any]) -> dict[str, HeldKey]:
    """The signing keys of a JWKS by ``kid``; encryption keys and keys PyJWT cannot load are
    skipped, as a key set may carry keys for others."""
    held: dict[str, HeldKey] = {}
    for raw in document.get("keys") or ():
        if not isinstance(raw, dict) or raw.get("use", "sig") != "sig" or not raw.get("kid"):
            continue
        try:
            loaded = jwt.PyJWK(raw)
        except (jwt.PyJWTError, ValueError, TypeError):
            continue
        kty, crv = str(raw.get("kty")), str(raw.get("crv") or "")
        algorithms = (raw["alg"],) if raw.get("alg") else _BY_KEY_TYPE.get((kty, crv), ())
        if algorithms:
            held[str(raw["kid"])] = HeldKey(loaded.key, tuple(algorithms))
    if not held:
        raise ValueError("the key set holds no signing key")
    return held

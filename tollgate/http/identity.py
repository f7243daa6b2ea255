"""Reviewer identity from OIDC access tokens: roles and tenant come from the token, never from
the request.

Any OIDC provider works by configuration (``TOLLGATE_OIDC_ISSUER``, ``TOLLGATE_OIDC_AUDIENCE``,
``TOLLGATE_OIDC_JWKS_URL``, claim names in ``TOLLGATE_OIDC_ROLES_CLAIM`` and
``TOLLGATE_OIDC_TENANT_CLAIM``). With no issuer configured, the embedded default trusts tokens
signed by a dev key kept in the state folder (``tollgate dev token``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tollgate.config.settings import Settings
from tollgate.http.claims import MAX_TOKEN_CHARS, ClaimError, checked_claims

DEV_ISSUER = "tollgate-dev"
DEV_AUDIENCE = "tollgate"
DEV_KEY_FILE = "dev-token-key.pem"
_ALGORITHMS = ("RS256", "ES256", "PS256")
DEV_ALGORITHM = "ES256"


class IdentityError(Exception):
    """A token that proves nothing; ``code`` is safe to show, the token never is."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


@dataclass(frozen=True)
class Identity:
    reviewer: str
    roles: tuple[str, ...]
    tenant: str

    def role_for(self, required: list[str]) -> str:
        """The role this decision is made in: one the review needs, if the reviewer holds it."""
        return next((r for r in required if r in self.roles), self.roles[0])


@dataclass
class Verifier:
    issuer: str
    audience: str
    key: Any = None  # a public key (dev) ...
    jwks: jwt.PyJWKClient | None = None  # ... or the issuer's JWKS
    roles_claim: str = "roles"
    tenant_claim: str = "tenant"
    #: What this issuer signs with (the dev key: ES256 only). A JWKS key narrows it to its own.
    algorithms: tuple[str, ...] = _ALGORITHMS

    async def verify(self, token: str) -> Identity:
        if len(token) > MAX_TOKEN_CHARS:
            raise IdentityError("bad_token", f"the token is over {MAX_TOKEN_CHARS} characters")
        try:
            key, algorithms = self.key, list(self.algorithms)
            if self.jwks is not None:  # urllib under the hood: keep it off the event loop
                signing = await asyncio.to_thread(self.jwks.get_signing_key_from_jwt, token)
                key = signing.key
                algorithms = [a for a in algorithms if a == signing.algorithm_name]
            # A token in an algorithm the key is not for is refused before the key is touched
            # (PyJWT checks the header's alg against this list first), never a crash on a key
            # of the wrong type.
            claims = jwt.decode(token, key, algorithms=algorithms, issuer=self.issuer,
                                audience=self.audience,
                                options={"require": ["exp", "iss", "aud", "sub"]})
        except jwt.ExpiredSignatureError:
            raise IdentityError("token_expired", "the token has expired") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise IdentityError("bad_token", f"the token is not valid here "
                                f"({type(exc).__name__})") from None
        try:
            reviewer, roles, tenant = checked_claims(
                claims, roles_claim=self.roles_claim, tenant_claim=self.tenant_claim)
        except ClaimError as exc:
            raise IdentityError(exc.code, str(exc)) from None
        return Identity(reviewer=reviewer, roles=roles, tenant=tenant)


def dev_private_key(state_dir: Path) -> ec.EllipticCurvePrivateKey:
    """The dev signing key: made once, kept under the state folder, readable by the owner only."""
    path = state_dir / DEV_KEY_FILE
    if path.exists():
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        return loaded
    key = ec.generate_private_key(ec.SECP256R1())
    state_dir.mkdir(parents=True, exist_ok=True)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return key


def issue_dev_token(state_dir: Path, *, reviewer: str, role: str, tenant: str,
                    ttl_s: int = 8 * 3600) -> str:
    now = int(time.time())
    claims = {"iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "sub": reviewer, "roles": [role],
              "tenant": tenant, "iat": now, "exp": now + ttl_s}
    return jwt.encode(claims, dev_private_key(state_dir), algorithm=DEV_ALGORITHM)


def verifier_from_settings(settings: Settings) -> Verifier:
    oidc = settings.identity
    roles_claim, tenant_claim, issuer = oidc.roles_claim, oidc.tenant_claim, oidc.issuer
    if not issuer:
        return Verifier(DEV_ISSUER, DEV_AUDIENCE, key=dev_private_key(settings.state_dir)
                        .public_key(), roles_claim=roles_claim, tenant_claim=tenant_claim,
                        algorithms=(DEV_ALGORITHM,))
    audience, jwks_url = oidc.audience, oidc.jwks_url
    if not audience or not jwks_url:
        raise SystemExit("TOLLGATE_OIDC_ISSUER needs TOLLGATE_OIDC_AUDIENCE and "
                         "TOLLGATE_OIDC_JWKS_URL")
    return Verifier(issuer, audience, jwks=jwt.PyJWKClient(jwks_url, cache_keys=True),
                    roles_claim=roles_claim, tenant_claim=tenant_claim)

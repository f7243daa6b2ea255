"""Who a token says its holder is, checked the same way on every path: the HTTP service, the
web inbox, the CLI and the workflow's update validator (ADR 0026).

Any OIDC provider works by configuration (``TOLLGATE_OIDC_ISSUER``, ``TOLLGATE_OIDC_AUDIENCE``,
claim names in ``TOLLGATE_OIDC_ROLES_CLAIM`` and ``TOLLGATE_OIDC_TENANT_CLAIM``); its keys are
found through discovery unless ``TOLLGATE_OIDC_JWKS_URL`` names them, and a key rollover is
followed without a restart (``tollgate/runtime/jwks.py``). With no issuer configured, the
embedded default trusts tokens signed by a dev key kept in the state folder
(``tollgate dev token``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import jwt
import structlog
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from contracts.identity import IdentityRefused, VerifiedIdentity
from tollgate.codec.files import write_private
from tollgate.config.settings import Settings
from tollgate.runtime.claims import MAX_TOKEN_CHARS, ClaimError, checked_claims
from tollgate.runtime.jwks import HeldKey, KeySet

log = structlog.get_logger("tollgate.identity")

DEV_ISSUER = "tollgate-dev"
DEV_AUDIENCE = "tollgate"
DEV_KEY_FILE = "dev-token-key.pem"
_ALGORITHMS = ("RS256", "ES256", "PS256")
#: What the dev key signs with: a token in any other algorithm is refused, never a crash on a
#: key of the wrong type.
DEV_ALGORITHM = "ES256"
#: How often a worker refetches the issuer's keys for its validator (providers publish a new key
#: days before they sign with it).
KEYS_REFRESH_EVERY_S = 300.0
#: Roles that mark an account as not one person's.
SERVICE_ROLES = frozenset({"service", "shared"})

#: The name the HTTP service has always used for a refused token.
IdentityError = IdentityRefused


@dataclass(frozen=True)
class Identity:
    reviewer: str
    roles: tuple[str, ...]
    tenant: str
    subject: str = ""
    service: bool = False
    #: The verified token itself, so a decision can carry it to the workflow's validator.
    token: str = field(default="", repr=False, compare=False)

    def role_for(self, required: list[str]) -> str:
        """The role this decision is made in: one the review needs, if the reviewer holds it."""
        return next((r for r in required if r in self.roles), self.roles[0])

    def verified(self) -> VerifiedIdentity:
        return VerifiedIdentity(subject=self.subject or self.reviewer, reviewer=self.reviewer,
                                roles=self.roles, tenant=self.tenant, service=self.service)


def is_service_account(claims: dict[str, Any], roles: list[str]) -> bool:
    """A token that names no person: a service role, a client-credentials grant (``gty``,
    Auth0), a Keycloak service-account user, or a client id where a person's name would be."""
    name = str(claims.get("preferred_username") or "")
    client_only = "client_id" in claims and (not name or claims.get("sub") == claims["client_id"])
    return (bool(SERVICE_ROLES.intersection(roles)) or client_only
            or claims.get("gty") == "client-credentials" or name.startswith("service-account-"))


@dataclass
class Verifier:
    issuer: str
    audience: str
    key: Any = None  # a public key (dev) ...
    keys: KeySet | None = None  # ... or the issuer's key set
    roles_claim: str = "roles"
    tenant_claim: str = "tenant"
    #: What this issuer signs with (the dev key: ES256 only). A JWKS key narrows it to its own.
    algorithms: tuple[str, ...] = _ALGORITHMS
    #: The task that keeps ``keys`` fresh for ``verify_cached`` (``install_decision_verifier``).
    refresher: asyncio.Task[None] | None = field(default=None, repr=False, compare=False)

    async def verify(self, token: str) -> Identity:
        _bounded(token)
        if self.keys is None:
            return self._identity(token, self.key, self.algorithms, now=None)
        held = await self.keys.key_for(_kid(token))
        return self._identity(token, *self._signing(held), now=None)

    def verify_cached(self, token: str, now: datetime) -> VerifiedIdentity:
        """``verify`` without I/O, against the keys already held, at the time given: the
        workflow validator's verifier (``policies.decision_identity.install_verifier``). The
        keys held are those of the last fetch, ``prefetch``'s or a ``verify``'s in this process."""
        _bounded(token)
        if self.keys is None:
            return self._identity(token, self.key, self.algorithms, now=now).verified()
        held = self.keys.held.get(_kid(token))
        return self._identity(token, *self._signing(held), now=now).verified()

    def stop(self) -> None:
        """Stop keeping the keys fresh (the process's workers have stopped)."""
        if self.refresher is not None:
            self.refresher.cancel()

    async def prefetch(self) -> None:
        """Hold the issuer's current signing keys (a worker calls it at start)."""
        if self.keys is not None:
            await self.keys.refresh(force=True)

    def _signing(self, held: HeldKey | None) -> tuple[Any, tuple[str, ...]]:
        if held is None:
            raise IdentityRefused("unknown_signing_key", "the token is signed by a key not "
                                  "among the issuer's keys held here")
        return held.key, tuple(a for a in self.algorithms if a in held.algorithms)

    def _identity(self, token: str, key: Any, algorithms: tuple[str, ...], *,
                  now: datetime | None) -> Identity:
        # PyJWT checks the header's alg against ``algorithms`` before it touches the key, so a
        # token in an algorithm the key is not for is refused, never a crash on the key's type.
        try:
            claims = jwt.decode(token, key, algorithms=list(algorithms), issuer=self.issuer,
                                audience=self.audience, options={
                                    "require": ["exp", "iss", "aud", "sub"],
                                    "verify_exp": now is None, "verify_iat": now is None,
                                    "verify_nbf": now is None})
        except jwt.ExpiredSignatureError:
            raise IdentityRefused("token_expired", "the token has expired") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise _bad(exc) from None
        if now is not None and not float(claims["exp"]) > now.timestamp():
            raise IdentityRefused("token_expired", "the token has expired")
        try:
            reviewer, roles, tenant = checked_claims(
                claims, roles_claim=self.roles_claim, tenant_claim=self.tenant_claim)
        except ClaimError as exc:
            raise IdentityRefused(exc.code, str(exc)) from None
        return Identity(reviewer=reviewer, roles=roles, tenant=tenant,
                        subject=str(claims["sub"]), service=is_service_account(claims, list(roles)),
                        token=token)


def _bounded(token: str) -> None:
    if len(token) > MAX_TOKEN_CHARS:
        raise IdentityRefused("bad_token", f"the token is over {MAX_TOKEN_CHARS} characters")


def _kid(token: str) -> str:
    try:
        kid = jwt.get_unverified_header(token).get("kid")
    except (jwt.PyJWTError, ValueError) as exc:  # a lone surrogate: UnicodeEncodeError
        raise _bad(exc) from None
    if not isinstance(kid, str) or not kid or len(kid) > 256:
        raise IdentityRefused("bad_token", "the token names no signing key (kid)")
    return kid


def _bad(exc: Exception) -> IdentityRefused:
    return IdentityRefused("bad_token", f"the token is not valid here ({type(exc).__name__})")


def dev_private_key(state_dir: Path) -> ec.EllipticCurvePrivateKey:
    """The dev signing key: made once, kept under the state folder, readable by the owner only."""
    path = state_dir / DEV_KEY_FILE
    if path.exists():
        loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        assert isinstance(loaded, ec.EllipticCurvePrivateKey)
        return loaded
    key = ec.generate_private_key(ec.SECP256R1())
    state_dir.mkdir(parents=True, exist_ok=True)
    # Created at 0600, never written first and narrowed after (others could read it between).
    write_private(path, key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()).decode("ascii"))
    return key


def issue_dev_token(state_dir: Path, *, reviewer: str, role: str, tenant: str,
                    ttl_s: int = 8 * 3600, roles: tuple[str, ...] = (),
                    extra: dict[str, Any] | None = None) -> str:
    """A dev token; ``roles`` adds roles after ``role``, ``extra`` adds claims (tests)."""
    now = int(time.time())
    claims = {"iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "sub": reviewer,
              "roles": [role, *roles], "tenant": tenant, "iat": now, "exp": now + ttl_s,
              **(extra or {})}
    return jwt.encode(claims, dev_private_key(state_dir), algorithm=DEV_ALGORITHM)


def verifier_from_settings(settings: Settings) -> Verifier:
    oidc = settings.identity
    roles_claim, tenant_claim, issuer = oidc.roles_claim, oidc.tenant_claim, oidc.issuer
    if not issuer:
        return Verifier(DEV_ISSUER, DEV_AUDIENCE, key=dev_private_key(settings.state_dir)
                        .public_key(), roles_claim=roles_claim, tenant_claim=tenant_claim,
                        algorithms=(DEV_ALGORITHM,))
    if not oidc.audience:
        raise SystemExit("TOLLGATE_OIDC_ISSUER needs TOLLGATE_OIDC_AUDIENCE")
    keys = KeySet(issuer, jwks_url=oidc.jwks_url, cooldown_s=oidc.jwks_cooldown_s)
    return Verifier(issuer, oidc.audience, keys=keys, roles_claim=roles_claim,
                    tenant_claim=tenant_claim)


def warn_if_identity_unset(settings: Settings) -> None:
    """At the start of a process that checks reviewers' tokens (a main worker, the HTTP
    service): with no issuer configured and no dev key in its state folder, the dev key it is
    about to make is one that signed no reviewer's token, so every decision will be refused.
    ``tollgate dev`` shares one state folder, and its key, among its processes; a deployment's
    containers each have their own (ADR 0086). Said once, as a warning: intake, drafting and
    sends of approved events do not need it."""
    if settings.identity.issuer or (settings.state_dir / DEV_KEY_FILE).exists():
        return
    log.warning("reviewer_identity_unset",
                detail="TOLLGATE_OIDC_ISSUER is not set and the state folder holds no dev key: "
                       "this process makes a key of its own, which signed no reviewer's token, "
                       "so every review decision is refused; set TOLLGATE_OIDC_ISSUER and "
                       "TOLLGATE_OIDC_AUDIENCE (docs/review.md)")


async def install_decision_verifier(settings: Settings) -> Verifier:
    """Make this process's workflows re-check every review decision's token (worker start)."""
    from policies.decision_identity import install_verifier

    verifier = verifier_from_settings(settings)
    try:
        await verifier.prefetch()
    except IdentityRefused as exc:
        # The worker still starts: until a refetch holds the keys, every decision is refused
        # (unknown_signing_key), and the reviewer is told to try again; nothing is let through.
        log.warning("decision_keys_unavailable", code=exc.code,
                    detail="review decisions are refused until the issuer's keys are fetched"
                           f" (tried again every {KEYS_REFRESH_EVERY_S:g} s)")
    if verifier.keys is not None:
        verifier.refresher = asyncio.create_task(verifier.keys.keep_fresh(KEYS_REFRESH_EVERY_S))
    install_verifier(verifier.verify_cached)
    return verifier

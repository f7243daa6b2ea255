"""Tokens from an OIDC issuer, verified against its JWKS served over real HTTP: issuer,
audience, expiry and signature all matter, and roles and tenant come from configured claims."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tollgate.config.settings import Settings
from tollgate.http.deps import Services
from tollgate.runtime.identity import (
    DEV_AUDIENCE,
    DEV_ISSUER,
    IdentityError,
    Verifier,
    issue_dev_token,
    verifier_from_settings,
)

ISSUER, AUDIENCE = "https://login.example.test/realms/acme", "tollgate-api"


@pytest.fixture(scope="module")
def issuer_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def jwks_url(issuer_key: rsa.RSAPrivateKey) -> Iterator[str]:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(issuer_key.public_key()))
    body = json.dumps({"keys": [{**public, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/certs"
    server.shutdown()


def verifier(jwks_url: str, tmp_path: Path) -> Verifier:
    return verifier_from_settings(Settings.from_env({
        "TOLLGATE_STATE_DIR": str(tmp_path), "TOLLGATE_OIDC_ISSUER": ISSUER,
        "TOLLGATE_OIDC_AUDIENCE": AUDIENCE, "TOLLGATE_OIDC_JWKS_URL": jwks_url,
        "TOLLGATE_OIDC_ROLES_CLAIM": "tollgate_roles", "TOLLGATE_OIDC_TENANT_CLAIM": "org"}))


def token(key: rsa.RSAPrivateKey, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "0b8f", "preferred_username": "lan.nguyen",
            "tollgate_roles": ["reviewer", "care_lead"], "org": "acme", "iat": now,
            "exp": now + 300, **claims}
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": "k1"})


async def test_issuer_token_gives_identity_from_configured_claims(
        jwks_url: str, issuer_key: rsa.RSAPrivateKey, tmp_path: Path) -> None:
    who = await verifier(jwks_url, tmp_path).verify(token(issuer_key))
    assert (who.reviewer, who.tenant) == ("lan.nguyen", "acme")
    assert who.role_for(["care_lead"]) == "care_lead"


@pytest.mark.parametrize(("claims", "code"), [
    ({"aud": "another-api"}, "bad_token"), ({"iss": "https://evil.test"}, "bad_token"),
    ({"exp": int(time.time()) - 60}, "token_expired"), ({"org": None}, "missing_claims"),
])
async def test_wrong_issuer_audience_expiry_or_claims_are_refused(
        jwks_url: str, issuer_key: rsa.RSAPrivateKey, tmp_path: Path,
        claims: dict[str, Any], code: str) -> None:
    with pytest.raises(IdentityError) as refused:
        await verifier(jwks_url, tmp_path).verify(token(issuer_key, **claims))
    assert refused.value.code == code


async def test_token_signed_by_another_key_is_refused(jwks_url: str, tmp_path: Path) -> None:
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    with pytest.raises(IdentityError) as refused:
        await verifier(jwks_url, tmp_path).verify(token(stranger))
    assert refused.value.code == "bad_token"


def test_issuer_without_audience_or_jwks_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="needs TOLLGATE_OIDC_AUDIENCE"):
        verifier_from_settings(Settings.from_env({
            "TOLLGATE_STATE_DIR": str(tmp_path), "TOLLGATE_OIDC_ISSUER": ISSUER}))


async def test_token_in_an_algorithm_the_dev_issuer_does_not_use_is_401(
        api: httpx.AsyncClient, http_services: Services) -> None:
    # The dev issuer signs ES256; an RS256 token used to reach PyJWT's RSA key loader with the
    # EC public key and answer 500 ("Expecting a PEM-formatted key").
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = int(time.time())
    forged = jwt.encode({"iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "sub": "mallory",
                         "roles": ["care_lead"], "tenant": "acme", "exp": now + 300},
                        stranger, algorithm="RS256")
    for call in (api.get("/v1/reviews", headers={"Authorization": f"Bearer {forged}"}),
                 api.post("/v1/items", json={"url": "https://e.com/a", "title": "t"},
                          headers={"Authorization": f"Bearer {forged}"})):
        answer = await call
        assert answer.status_code == 401, answer.text
        assert answer.json()["detail"].startswith("bad_token")


async def test_hmac_token_naming_the_issuers_rsa_key_is_refused(
        jwks_url: str, issuer_key: rsa.RSAPrivateKey, tmp_path: Path) -> None:
    now = int(time.time())
    forged = jwt.encode({"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "tollgate_roles": ["r"],
                         "org": "acme", "exp": now + 300}, "a" * 32, algorithm="HS256",
                        headers={"kid": "k1"})
    with pytest.raises(IdentityError) as refused:
        await verifier(jwks_url, tmp_path).verify(forged)
    assert refused.value.code == "bad_token"


@pytest.mark.parametrize(("claims", "claim"), [
    ({"preferred_username": "x" * 129}, "preferred_username"),
    ({"preferred_username": None, "sub": "y" * 256}, "sub"),
    ({"preferred_username": "lan\x00nguyen"}, "preferred_username"),
    ({"preferred_username": "lan\u200dnguyen"}, "preferred_username"),
    ({"preferred_username": " lan"}, "preferred_username"),
    ({"preferred_username": 7}, "preferred_username"),
    ({"tollgate_roles": [1, 2]}, "tollgate_roles"),
    ({"tollgate_roles": {"care_lead": True}}, "tollgate_roles"),
    ({"tollgate_roles": ["reviewer"] * 100}, "tollgate_roles"),
    ({"tollgate_roles": ["r" * 65]}, "tollgate_roles"),
    ({"org": "acme\n"}, "org"), ({"org": ["acme"]}, "org"), ({"org": "a" * 200}, "org"),
])
async def test_claims_out_of_shape_or_size_are_refused_naming_the_claim(
        jwks_url: str, issuer_key: rsa.RSAPrivateKey, tmp_path: Path,
        claims: dict[str, Any], claim: str) -> None:
    with pytest.raises(IdentityError) as refused:
        await verifier(jwks_url, tmp_path).verify(token(issuer_key, **claims))
    assert refused.value.code == "bad_claim"
    assert f"claim '{claim}'" in refused.value.message


async def test_an_over_long_subject_on_a_decision_is_401_not_500(
        api: httpx.AsyncClient, http_services: Services) -> None:
    raw = issue_dev_token(http_services.settings.state_dir, reviewer="r" * 5000,
                          role="care_lead", tenant="acme")
    answer = await api.post("/v1/reviews/event%2Facme%2Fk-1/decision",
                            headers={"Authorization": f"Bearer {raw}"},
                            json={"decision": "approve", "reason": "ok", "request_id": "r",
                                  "draft_version": 1})
    assert answer.status_code == 401, answer.text
    assert "claim 'sub'" in answer.json()["detail"]


async def test_an_over_long_token_is_refused_unparsed(tmp_path: Path) -> None:
    dev = verifier_from_settings(Settings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path)}))
    with pytest.raises(IdentityError) as refused:
        await dev.verify("e" * 100_000)
    assert refused.value.code == "bad_token"

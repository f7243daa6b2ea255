"""A real OpenID provider for the identity tests: panva's certified ``oidc-provider`` (npm),
run with the machine's Node.js from ``tests/oidc/provider.mjs``. Installed by ``.ci/run``
(``npm ci --prefix tests/oidc``); without Node.js or the package the tests skip saying so."""

from __future__ import annotations

import json
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

HERE = Path(__file__).parent
PACKAGE = HERE / "node_modules" / "oidc-provider" / "package.json"
SECRET = "only-for-the-identity-tests"


def _private_jwk(key: Any, kid: str) -> dict[str, Any]:
    algorithm = jwt.algorithms.RSAAlgorithm if isinstance(key, rsa.RSAPrivateKey) \
        else jwt.algorithms.ECAlgorithm
    return {**json.loads(algorithm.to_jwk(key)), "kid": kid, "use": "sig"}


class Provider:
    """One provider process; ``rotate`` restarts it on the same port with new signing keys."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.generation, self.port = folder, 0, 0
        self.keys: list[dict[str, Any]] = []
        self.process: subprocess.Popen[str] | None = None
        self.issuer = ""
        self.rotate()

    def rotate(self) -> None:
        """New RSA and EC keys sign from now on; the previous ones stay published."""
        self.generation += 1
        g = self.generation
        fresh = [_private_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048),
                              f"rsa-{g}"),
                 _private_jwk(ec.generate_private_key(ec.SECP256R1()), f"ec-{g}")]
        self.keys = fresh + self.keys[:2]
        keys_file = self.folder / f"jwks-{g}.json"
        keys_file.write_text(json.dumps({"keys": self.keys}))
        self.stop()
        node = shutil.which("node") or "node"
        self.process = subprocess.Popen(  # noqa: S603 - our own script, our own arguments
            [node, str(HERE / "provider.mjs"), str(keys_file), str(self.port)], cwd=HERE,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 30)
        line = self.process.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError("oidc-provider did not start")
        self.issuer = json.loads(line)["issuer"]
        self.port = int(self.issuer.rsplit(":", 1)[1])

    def token(self, client: str) -> str:
        """An access token (a JWT) from the client-credentials grant of ``client``."""
        answer = httpx.post(f"{self.issuer}/token", data={
            "grant_type": "client_credentials", "client_id": client, "client_secret": SECRET,
            "scope": "review"}, timeout=10)
        answer.raise_for_status()
        return str(answer.json()["access_token"])

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


def _require_provider() -> None:
    if shutil.which("node") is None or not PACKAGE.exists():
        pytest.skip("needs Node.js and the npm package oidc-provider "
                    "(npm ci --prefix tests/oidc; .ci/run does it)")


@pytest.fixture(scope="module")
def provider(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    """One provider the module's tests share (they do not rotate its keys)."""
    _require_provider()
    started = Provider(tmp_path_factory.mktemp("oidc"))
    yield started
    started.stop()


@pytest.fixture
def own_provider(tmp_path: Path) -> Iterator[Provider]:
    """A provider of the test's own, whose keys it may rotate."""
    _require_provider()
    started = Provider(tmp_path)
    yield started
    started.stop()


def forged(kid: str, alg: str = "RS256", key: Any = None, **claims: Any) -> str:
    """A token Tollgate must refuse: signed by a key the provider never held."""
    now = int(time.time())
    signer = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode({"iss": "x", "aud": "tollgate-api", "sub": "mallory", "roles": ["care_lead"],
                       "tenant": "acme", "exp": now + 300, **claims}, signer, algorithm=alg,
                      headers={"kid": kid})

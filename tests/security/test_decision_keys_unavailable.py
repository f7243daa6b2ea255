"""A worker whose identity provider does not answer at start still starts (ADR 0085), and its
review validator refuses every decision until it holds the provider's keys: nothing is let
through unchecked, and the warning names no token and no URL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jwt
import pytest
import structlog

from contracts.identity import IdentityRefused
from policies.decision_identity import install_verifier, installed_verifier
from tests.ports import free_port
from tollgate.config.settings import Settings
from tollgate.runtime.identity import Verifier, dev_private_key, install_decision_verifier


@pytest.fixture
async def started() -> AsyncIterator[tuple[Verifier, list[dict[str, Any]]]]:
    """The decision verifier a main worker installs, its provider not answering."""
    issuer = f"http://127.0.0.1:{free_port()}/realms/nobody-home"
    settings = Settings.from_env({"TOLLGATE_OIDC_ISSUER": issuer,
                                  "TOLLGATE_OIDC_AUDIENCE": "tollgate"})
    with structlog.testing.capture_logs() as logs:
        verifier = await install_decision_verifier(settings)
    try:
        yield verifier, logs
    finally:
        verifier.stop()
        install_verifier(None)


async def test_a_worker_starts_without_its_providers_keys_and_refuses_every_decision(
        started: tuple[Verifier, list[dict[str, Any]]], tmp_path: Path) -> None:
    verifier, logs = started
    assert verifier.refresher is not None and not verifier.refresher.done()  # it keeps trying
    [warning] = [e for e in logs if e["event"] == "decision_keys_unavailable"]
    assert warning["log_level"] == "warning" and "nobody-home" not in str(warning)
    verify = installed_verifier()
    assert verify is not None
    # A token as the provider would sign it, naming its key: no key is held to check it.
    claims = {"iss": verifier.issuer, "aud": "tollgate", "sub": "an.tran", "roles": ["care_lead"],
              "tenant": "acme", "exp": int(datetime.now(UTC).timestamp()) + 600}
    token = jwt.encode(claims, dev_private_key(tmp_path), algorithm="ES256",
                       headers={"kid": "k-2026"})
    with pytest.raises(IdentityRefused) as refused:
        verify(token, datetime.now(UTC))
    assert refused.value.code == "unknown_signing_key"

"""Tollgate against a real, certified OpenID provider (tests/oidc/conftest.py): it finds the
keys through discovery, verifies RS256 and ES256 access tokens, follows a key rollover without a
restart at the cost of one fetch, and refuses a wrong issuer, audience or algorithm."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from contracts.identity import IdentityRefused
from tests.eventually import eventually
from tests.oidc.conftest import Provider, forged
from tollgate.config.settings import Settings
from tollgate.runtime.identity import Verifier, verifier_from_settings

AUDIENCE = "tollgate-api"


def verifier(tmp_path: Path, issuer: str, **env: str) -> Verifier:
    """Configured as an operator would: issuer and audience, no JWKS URL (discovery)."""
    return verifier_from_settings(Settings.from_env({
        "TOLLGATE_STATE_DIR": str(tmp_path), "TOLLGATE_OIDC_ISSUER": issuer,
        "TOLLGATE_OIDC_AUDIENCE": AUDIENCE, **env}))


async def refused(check: Verifier, token: str) -> str:
    with pytest.raises(IdentityRefused) as refusal:
        await check.verify(token)
    assert token not in refusal.value.message
    return refusal.value.code


@pytest.mark.parametrize("client", ["tollgate-rs256", "tollgate-es256"])
async def test_tokens_of_the_provider_are_verified_through_discovery(
        provider: Provider, tmp_path: Path, client: str) -> None:
    token = await asyncio.to_thread(provider.token, client)
    check = verifier(tmp_path, provider.issuer)
    who = await check.verify(token)
    assert (who.tenant, who.roles, who.subject) == ("acme", ("automation",), client)
    # A client-credentials token names no person: it may run automation, never decide.
    assert who.service
    assert check.keys is not None and check.keys.jwks_url == f"{provider.issuer}/jwks"
    # The workflow validator's check, without I/O, on the keys that verify fetched.
    assert check.verify_cached(token, datetime.now(UTC)).tenant == "acme"


async def test_a_key_rollover_is_followed_without_a_restart(
        own_provider: Provider, tmp_path: Path) -> None:
    check = verifier(tmp_path, own_provider.issuer, TOLLGATE_OIDC_JWKS_COOLDOWN_S="0.5")
    await check.prefetch()
    assert check.keys is not None
    before = await asyncio.to_thread(own_provider.token, "tollgate-rs256")
    assert (await check.verify(before)).tenant == "acme"
    await asyncio.to_thread(own_provider.rotate)
    after = await asyncio.to_thread(own_provider.token, "tollgate-rs256")
    assert jwt.get_unverified_header(after)["kid"] == "rsa-2"
    # What a worker holds from its start cannot verify the new key yet ...
    with pytest.raises(IdentityRefused, match="key"):
        check.verify_cached(after, datetime.now(UTC))
    fetches = check.keys.fetches
    time.sleep(0.5)  # past the cooldown of the prefetch
    assert (await check.verify(after)).tenant == "acme"
    assert check.keys.fetches == fetches + 1
    # ... and once one verify has fetched it, the same process's validator can.
    assert check.verify_cached(after, datetime.now(UTC)).tenant == "acme"
    assert (await check.verify(before)).tenant == "acme"  # the old key is still published


async def test_unknown_keys_cost_the_provider_one_fetch_per_cooldown(
        provider: Provider, tmp_path: Path) -> None:
    check = verifier(tmp_path, provider.issuer)  # the default cooldown: 30 s
    await check.prefetch()
    assert check.keys is not None
    fetches = check.keys.fetches
    codes = {await refused(check, forged(f"made-up-{n}")) for n in range(20)}
    assert codes == {"unknown_signing_key"}
    assert check.keys.fetches == fetches  # all within the cooldown of the prefetch


async def test_a_token_for_another_audience_is_refused(
        provider: Provider, tmp_path: Path) -> None:
    token = await asyncio.to_thread(provider.token, "another-api")
    assert await refused(verifier(tmp_path, provider.issuer), token) == "bad_token"


async def test_a_token_from_another_issuer_is_refused(
        provider: Provider, tmp_path: Path) -> None:
    token = await asyncio.to_thread(provider.token, "tollgate-rs256")
    # The provider's own keys, but Tollgate trusts another issuer.
    other = verifier(tmp_path, "https://login.example.test/realms/acme",
                     TOLLGATE_OIDC_JWKS_URL=f"{provider.issuer}/jwks")
    assert await refused(other, token) == "bad_token"


async def test_a_discovery_document_naming_another_issuer_gives_no_keys(
        provider: Provider, tmp_path: Path) -> None:
    token = await asyncio.to_thread(provider.token, "tollgate-rs256")
    # A trailing slash is another issuer (OpenID Connect Discovery 1.0, section 4.3).
    slashed = verifier(tmp_path, provider.issuer + "/")
    assert await refused(slashed, token) == "keys_unavailable"


async def test_a_token_in_another_algorithm_is_refused(
        provider: Provider, tmp_path: Path) -> None:
    check = verifier(tmp_path, provider.issuer)
    # The provider signs PS384 with its RSA key when asked: not an algorithm Tollgate accepts.
    ps384 = await asyncio.to_thread(provider.token, "tollgate-ps384")
    assert await refused(check, ps384) == "bad_token"
    # HS256 naming the RSA key (the algorithm-confusion forgery) and ES256 naming it.
    assert await refused(check, forged("rsa-1", "HS256", key="k" * 32)) == "bad_token"
    p256 = ec.generate_private_key(ec.SECP256R1())
    assert await refused(check, forged("rsa-1", "ES256", key=p256)) == "bad_token"


async def test_a_worker_that_never_fetches_on_demand_still_follows_a_rollover(
        own_provider: Provider, tmp_path: Path) -> None:
    check = verifier(tmp_path, own_provider.issuer)
    await check.prefetch()
    assert check.keys is not None
    refresher = asyncio.create_task(check.keys.keep_fresh(0.2))
    try:
        await asyncio.to_thread(own_provider.rotate)
        after = await asyncio.to_thread(own_provider.token, "tollgate-es256")
        await eventually(lambda: "ec-2" in check.keys.held if check.keys else False,
                         "the refresher holds the new key", timeout=10)
        assert check.verify_cached(after, datetime.now(UTC)).tenant == "acme"
    finally:
        refresher.cancel()

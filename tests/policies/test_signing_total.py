"""Signing is total (issue 25): hostile text is refused for what it is, never a crash."""

from __future__ import annotations

import json

from policies import signing


def test_an_envelope_with_a_lone_surrogate_signs_and_fails_verification_cleanly() -> None:
    envelope = {"tenant_id": "acme", "idempotency_key": "k-\ud800"}
    signature = signing.sign(envelope, "s3cret")
    assert signature.startswith(signing.SIGNATURE_PREFIX)
    assert signing.verify({**envelope, "signature": signature}, "s3cret")
    assert not signing.verify({**envelope, "signature": "sha256=\udfff"}, "s3cret")


def test_too_deep_a_document_is_passed_on_unsigned_and_never_verifies() -> None:
    deep = "[" * 5000 + "]" * 5000
    raw = json.dumps({"tenant_id": "acme", "payload": "__HOLE__"}).replace('"__HOLE__"', deep)
    assert signing.sign_json(raw, {"acme": "s3cret"}) == raw
    nested: list[object] = []
    for _ in range(5000):
        nested = [nested]
    assert not signing.verify({"tenant_id": "acme", "payload": nested,
                               "signature": "sha256=00"}, "s3cret")


def test_a_valid_event_signs_as_before() -> None:
    envelope = {"tenant_id": "acme", "idempotency_key": "k-1", "note": "Grüße"}
    body = '{"idempotency_key":"k-1","note":"Grüße","tenant_id":"acme"}'.encode()
    assert signing.canonical_bytes(envelope) == body

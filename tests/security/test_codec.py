"""Payload encryption: what Temporal stores is ciphertext, keys rotate, unknown keys fail."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from temporalio.api.common.v1 import Payload
from temporalio.api.failure.v1 import Failure
from temporalio.exceptions import ApplicationError

from contracts import ReviewDecision
from tests.conftest import CONVERTER, TEST_KEYS
from tollgate.codec.keyring import KeyRing, KeyRingError, load_key_ring, new_key_ring
from tollgate.codec.payload import (
    KEY_ID_META,
    EncryptionCodec,
    UnknownKeyError,
    encrypted_data_converter,
)
from tollgate.config.service import CodecSettings

DECISION = ReviewDecision(request_id="r-1", decision="approve", reviewer="lan.nguyen",
                          role="care_lead", reason="call 0912 345 678 first", draft_version=1)


async def test_a_payload_leaves_as_ciphertext_and_comes_back_whole() -> None:
    (sealed,) = await CONVERTER.encode([DECISION])
    assert b"0912 345 678" not in sealed.SerializeToString()
    assert b"lan.nguyen" not in sealed.SerializeToString()
    assert sealed.metadata[KEY_ID_META] == TEST_KEYS.active.encode()
    (back,) = await CONVERTER.decode([sealed], [ReviewDecision])
    assert back == DECISION


async def test_rotation_old_payloads_still_read_new_ones_use_the_new_key() -> None:
    old = new_key_ring("2026-01")
    (before,) = await encrypted_data_converter(old).encode([DECISION])
    rotated = old.rotated("2026-06")
    converter = encrypted_data_converter(rotated)
    (after,) = await converter.encode([DECISION])
    assert after.metadata[KEY_ID_META] == b"2026-06"
    assert await converter.decode([before, after], [ReviewDecision, ReviewDecision]) == [
        DECISION, DECISION]


async def test_a_payload_under_a_key_not_in_the_ring_fails_and_never_passes_in_clear() -> None:
    (sealed,) = await encrypted_data_converter(new_key_ring("gone")).encode([DECISION])
    with pytest.raises(UnknownKeyError, match=r"'gone'.*not in the key ring"):
        await EncryptionCodec(TEST_KEYS).decode([sealed])


async def test_a_relabelled_payload_does_not_decrypt() -> None:
    codec = EncryptionCodec(TEST_KEYS)
    sealed = codec.encrypt(Payload(data=b"x"))
    other = next(k for k in TEST_KEYS.keys if k != TEST_KEYS.active)
    forged = Payload(metadata={**sealed.metadata, KEY_ID_META: other.encode()}, data=sealed.data)
    with pytest.raises(UnknownKeyError, match="does not authenticate"):
        codec.decrypt(forged)


async def test_failure_messages_and_stack_traces_are_encrypted() -> None:
    failure = Failure()
    error = ApplicationError("customer lan@example.vn unreachable", type="RejectedError")
    await CONVERTER.encode_failure(error, failure)
    assert b"lan@example.vn" not in failure.SerializeToString()
    assert "lan@example.vn" in str(await CONVERTER.decode_failure(failure))


def test_key_ring_from_env_json_and_one_line_errors(tmp_path: Path) -> None:
    ring = new_key_ring("a")
    assert load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS": ring.to_json()})).active == "a"
    with pytest.raises(KeyRingError, match=r"key ring not found: .*keys\.json"):
        load_key_ring(CodecSettings.from_env({"TOLLGATE_STATE_DIR": str(tmp_path)}))
    bad = tmp_path / "k.json"
    bad.write_text(json.dumps({"active": "a", "keys": {"a": "c2hvcnQ="}}))
    with pytest.raises(KeyRingError, match="not 32 bytes"):
        load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(bad)}))
    bad.write_text("{not json")
    with pytest.raises(KeyRingError, match="expected"):
        load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(bad)}))
    with pytest.raises(KeyRingError, match="active key 'b'"):
        KeyRing(active="b", keys=dict(ring.keys))
    # The key material never shows in a repr (it would end up in a log or a traceback).
    assert "keys" not in repr(dataclasses.replace(ring))

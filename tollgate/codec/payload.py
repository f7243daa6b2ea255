"""Payload encryption: every payload Temporal stores (inputs, results, signals, memo, failure
messages and stack traces) leaves the process as AES-256-GCM ciphertext.

Keys come from a key ring: ``{"active": "<id>", "keys": {"<id>": "<base64 of 32 bytes>"}}``,
read from ``TOLLGATE_KEYS`` (the JSON itself) or ``TOLLGATE_KEYS_FILE`` (default
``$TOLLGATE_STATE_DIR/keys.json``). The active key encrypts; every listed key decrypts, so a new
key can become active while histories written under older keys still replay. A payload naming a
key the ring does not hold fails loudly: it is never handed on as it is.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.converter import (
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    PayloadCodec,
)

from tollgate.codec.files import write_private
from tollgate.config.service import CodecSettings

ENCODING = b"binary/encrypted"
KEY_ID_META = "encryption-key-id"
_NONCE = 12


class KeyRingError(SystemExit):
    """The key ring cannot be read or is incomplete (one line, no traceback for the user)."""


class UnknownKeyError(ValueError):
    """A payload was encrypted with a key this process does not hold."""


@dataclass(frozen=True)
class KeyRing:
    active: str
    keys: Mapping[str, bytes] = dataclasses.field(repr=False)

    def __post_init__(self) -> None:
        if self.active not in self.keys:
            raise KeyRingError(f"key ring: the active key {self.active!r} is not in its keys")
        for key_id, key in self.keys.items():
            if len(key) != 32:
                raise KeyRingError(f"key ring: key {key_id!r} is not 32 bytes (AES-256)")

    @classmethod
    def parse(cls, text: str, where: str) -> KeyRing:
        try:
            data = json.loads(text)
            keys = {str(k): base64.b64decode(v, validate=True) for k, v in data["keys"].items()}
            return cls(active=str(data["active"]), keys=keys)
        except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
            raise KeyRingError(f"{where}: expected {{\"active\": id, \"keys\": {{id: base64 of "
                               "32 bytes}}}}") from None

    def to_json(self) -> str:
        keys = {k: base64.b64encode(v).decode() for k, v in self.keys.items()}
        return json.dumps({"active": self.active, "keys": keys}, indent=2)

    def rotated(self, key_id: str) -> KeyRing:
        """A ring whose new random key ``key_id`` encrypts; the old keys still decrypt."""
        if key_id in self.keys:
            raise KeyRingError(f"key ring: key {key_id!r} exists already")
        return KeyRing(active=key_id, keys={**self.keys, key_id: secrets.token_bytes(32)})


def new_key_ring(key_id: str = "k1") -> KeyRing:
    return KeyRing(active=key_id, keys={key_id: secrets.token_bytes(32)})


def load_key_ring(codec: CodecSettings) -> KeyRing:
    """The key ring named by ``TOLLGATE_KEYS`` or ``TOLLGATE_KEYS_FILE`` (see the module doc)."""
    if codec.keys:
        return KeyRing.parse(codec.keys.get_secret_value(), "TOLLGATE_KEYS")
    path = codec.keys_path
    if not path.exists():
        raise KeyRingError(f"payload key ring not found: {path} (run `tollgate dev` once, or "
                           "set TOLLGATE_KEYS_FILE or TOLLGATE_KEYS)")
    return KeyRing.parse(path.read_text(), str(path))


def ensure_keys_file(path: Path) -> None:
    """The dev stack's key ring: made once with a random key, kept beside the tenant keys."""
    if path.exists():
        return
    write_private(path, new_key_ring().to_json())


class EncryptionCodec(PayloadCodec):
    """AES-256-GCM with a fresh 96-bit nonce per payload; the key id is authenticated data, so
    a payload relabelled with another key id does not decrypt."""

    def __init__(self, ring: KeyRing) -> None:
        super().__init__()
        self._active = ring.active
        self._ciphers = {key_id: AESGCM(key) for key_id, key in ring.keys.items()}

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.encrypt(p) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [self.decrypt(p) for p in payloads]

    def encrypt(self, payload: Payload) -> Payload:
        key_id = self._active.encode()
        nonce = secrets.token_bytes(_NONCE)
        sealed = self._ciphers[self._active].encrypt(nonce, payload.SerializeToString(), key_id)
        return Payload(metadata={"encoding": ENCODING, KEY_ID_META: key_id}, data=nonce + sealed)

    def decrypt(self, payload: Payload) -> Payload:
        if payload.metadata.get("encoding") != ENCODING:
            # Never encrypted (e.g. a signal sent by hand with the `temporal` CLI): nothing to
            # undo. What this codec wrote always carries the encrypted encoding.
            return payload
        key_id = payload.metadata.get(KEY_ID_META, b"").decode(errors="replace")
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise UnknownKeyError(f"payload encrypted with key {key_id!r}, which is not in "
                                  "the key ring; add it to TOLLGATE_KEYS_FILE to read it")
        try:
            clear = cipher.decrypt(payload.data[:_NONCE], payload.data[_NONCE:], key_id.encode())
        except InvalidTag:
            raise UnknownKeyError(f"payload under key {key_id!r} does not authenticate "
                                  "(wrong key material or tampered data)") from None
        return Payload.FromString(clear)

    def key_ids(self) -> Iterable[str]:
        return self._ciphers.keys()


def encrypted_data_converter(ring: KeyRing) -> DataConverter:
    """The pydantic data converter plus the codec, with failure messages and stack traces moved
    into the (encrypted) encoded attributes."""
    return dataclasses.replace(
        pydantic_data_converter, payload_codec=EncryptionCodec(ring),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )

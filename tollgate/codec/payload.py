"""Payload encryption: every payload Temporal stores (inputs, results, signals, memo, failure
messages and stack traces) leaves the process as AES-256-GCM ciphertext.

Keys come from the key ring (``tollgate.codec.keyring``: a shared key set and one per tenant).
The codec learns whose payload it holds from Temporal's serialization context: the workflow id
``event/{tenant}/{key}`` of the workflow (or of the activity's workflow) names the tenant, whose
active key encrypts; any other id uses the shared key. Decryption picks the key by the key id in
the payload's metadata, so the codec server, which has no context, still decodes everything. A
payload naming a key the ring does not hold fails loudly: it is never handed on as it is.
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
from collections.abc import Iterable, Sequence
from typing import ClassVar, Self

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from temporalio.api.common.v1 import Payload
from temporalio.contrib.pydantic import PydanticPayloadConverter
from temporalio.converter import (
    ActivitySerializationContext,
    CompositePayloadConverter,
    DataConverter,
    DefaultFailureConverterWithEncodedAttributes,
    EncodingPayloadConverter,
    PayloadCodec,
    SerializationContext,
    WithSerializationContext,
    WorkflowSerializationContext,
)

from tollgate.codec.keyring import KeyRing

__all__ = ["ENCODING", "KEY_ID_META", "ContextCachingConverter", "EncryptionCodec",
           "SharedPydanticConverter", "UnknownKeyError", "encrypted_data_converter", "tenant_of"]

ENCODING = b"binary/encrypted"
KEY_ID_META = "encryption-key-id"
_NONCE = 12


class UnknownKeyError(ValueError):
    """A payload was encrypted with a key this process does not hold."""


def tenant_of(workflow_id: str | None) -> str | None:
    """The tenant an event workflow id names (``event/{tenant}/{key}``), else None."""
    parts = (workflow_id or "").split("/", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "event" and parts[1] else None


class EncryptionCodec(PayloadCodec, WithSerializationContext):
    """AES-256-GCM with a fresh 96-bit nonce per payload; the key id is authenticated data, so
    a payload relabelled with another key id does not decrypt. Without a context (the codec
    server, a plain client call) it encrypts with the shared key."""

    def __init__(self, ring: KeyRing, tenant: str | None = None) -> None:
        super().__init__()
        self._ring = ring
        self._active = ring.active_for(tenant)
        self._ciphers = {key_id: AESGCM(key) for key_id, key in ring.all_keys().items()}
        # One codec per active key, shared by every copy: the SDK asks for a context per
        # payload sequence, and the same object each time lets ContextCachingConverter reuse
        # its converter too.
        self._variants: dict[str, EncryptionCodec] = {self._active: self}

    @property
    def active_key_id(self) -> str:
        return self._active

    def with_context(self, context: SerializationContext) -> Self:
        workflow_id = (context.workflow_id if isinstance(
            context, WorkflowSerializationContext | ActivitySerializationContext) else None)
        active = self._ring.active_for(tenant_of(workflow_id))
        found = self._variants.get(active)
        if found is None:
            found = copy.copy(self)  # the ciphers and the variants are shared
            found._active = active
            found = self._variants.setdefault(active, found)
        return found  # type: ignore[return-value]  # copies of self: the same class

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


@dataclasses.dataclass(frozen=True)
class ContextCachingConverter(DataConverter):
    """A data converter that keeps the converter it made for each codec variant.

    The SDK calls ``with_context`` for every activity task, every workflow activation and
    every payload sequence of a command; ``DataConverter.with_context`` then clones itself
    whenever the codec differs (a tenant's key), and each clone rebuilds a payload converter
    and a failure converter only to replace them. Measured: about 70 µs a call, 3 to 4 % of a bench
    worker's samples (docs/performance.md, "Cost per mechanism"). The clone for a key is the
    same every time, so it is made once per key of the ring.
    """

    _by_codec: dict[int, DataConverter] = dataclasses.field(
        default_factory=dict, init=False, repr=False, compare=False)

    def with_context(self, context: SerializationContext) -> Self:
        codec = self.payload_codec
        if not isinstance(codec, EncryptionCodec) or any(
                isinstance(part, WithSerializationContext)
                and part.with_context(context) is not part
                for part in (self.payload_converter, self.failure_converter,
                             self.external_storage)):
            return super().with_context(context)  # the codec is not all that varies
        chosen = codec.with_context(context)
        if chosen is codec:
            return self
        # The codec variants live as long as the ring, so their ids are stable keys.
        found = self._by_codec.get(id(chosen))
        if found is None:
            found = self._by_codec.setdefault(id(chosen), super().with_context(context))
        return found  # type: ignore[return-value]  # a clone of self: the same class


class SharedPydanticConverter(PydanticPayloadConverter):
    """The SDK's pydantic payload converter whose encoding converters are built once per
    process, however often the SDK constructs it (ADR 0075).

    A data converter constructs its payload converter class on every construction, and the
    worker constructs data converters for every run and twice for every activation (it decodes
    and encodes through a fresh ``_CommandAwareDataConverter``): ≈ 9 µs each, and each with an
    empty cache of pydantic ``TypeAdapter``s, so every run also rebuilt the adapters of the
    types it reads. Every instance of this class holds the first one's encoding converters:
    they keep nothing per run or per context (none takes a serialization context), and the
    adapter cache (``functools.lru_cache``) and the adapters are safe across threads. Each
    instance still has its own mapping, so the SDK's ``_set_converters`` on one (its
    ``with_context``, were a converter ever to take a context) changes no other.
    """

    _shared: ClassVar[tuple[EncodingPayloadConverter, ...]] = ()

    def __init__(self) -> None:
        shared = SharedPydanticConverter._shared
        if not shared:
            super().__init__()
            SharedPydanticConverter._shared = tuple(self.converters.values())
        else:
            CompositePayloadConverter.__init__(self, *shared)


def encrypted_data_converter(ring: KeyRing) -> DataConverter:
    """The pydantic data converter plus the codec, with failure messages and stack traces moved
    into the (encrypted) encoded attributes."""
    return ContextCachingConverter(
        payload_converter_class=SharedPydanticConverter,
        payload_codec=EncryptionCodec(ring),
        failure_converter_class=DefaultFailureConverterWithEncodedAttributes,
    )

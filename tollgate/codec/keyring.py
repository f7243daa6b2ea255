"""The payload key ring: a shared key set, and a key set per tenant (crypto-shredding).

Format (``TOLLGATE_KEYS`` is the JSON itself, ``TOLLGATE_KEYS_FILE`` a file of it, default
``$TOLLGATE_STATE_DIR/keys.json``)::

    {"active": "k2", "keys": {"k1": "<base64 of 32 bytes>", "k2": "..."},
     "tenants": {"acme": {"active": "acme-1", "keys": {"acme-1": "..."}}}}

A tenant's payloads (workflow ids ``event/{tenant}/…``) are encrypted with its own active key;
a tenant the ring does not list, and a workflow id without a tenant, use the shared active key.
Every key decrypts (a payload names its key id), so each key set rotates on its own while
histories written under older keys still replay. Key ids are unique across the whole ring.
Deleting a tenant's entry makes every payload written under its keys unreadable for good and
leaves the other tenants' readable.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tollgate.codec.files import write_private
from tollgate.config.service import CodecSettings

_FORMAT = ('expected {"active": id, "keys": {id: base64 of 32 bytes}, "tenants": {tenant: '
           '{"active": id, "keys": {...}}}} ("tenants" optional)')


class KeyRingError(SystemExit):
    """The key ring cannot be read or is incomplete (one line, no traceback for the user)."""


@dataclass(frozen=True)
class KeySet:
    """One rotation line: ``active`` encrypts, every key in ``keys`` decrypts."""

    active: str
    keys: Mapping[str, bytes] = dataclasses.field(repr=False)

    def __post_init__(self) -> None:
        if self.active not in self.keys:
            raise KeyRingError(f"key ring: the active key {self.active!r} is not in its keys")
        for key_id, key in self.keys.items():
            if len(key) != 32:
                raise KeyRingError(f"key ring: key {key_id!r} is not 32 bytes (AES-256)")

    def with_new_key(self, key_id: str) -> KeySet:
        return KeySet(active=key_id, keys={**self.keys, key_id: secrets.token_bytes(32)})

    def to_dict(self) -> dict[str, Any]:
        return {"active": self.active,
                "keys": {k: base64.b64encode(v).decode() for k, v in self.keys.items()}}

    @classmethod
    def from_dict(cls, data: Any) -> KeySet:
        keys = {str(k): base64.b64decode(v, validate=True) for k, v in data["keys"].items()}
        return cls(active=str(data["active"]), keys=keys)


@dataclass(frozen=True)
class KeyRing(KeySet):
    """The shared key set (``active``, ``keys``) plus one key set per tenant."""

    tenants: Mapping[str, KeySet] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        seen = set(self.keys)
        for tenant, key_set in self.tenants.items():
            if clash := seen & set(key_set.keys):
                raise KeyRingError(f"key ring: tenant {tenant!r} reuses key id "
                                   f"{sorted(clash)[0]!r} (ids are unique across the ring)")
            seen |= set(key_set.keys)

    @classmethod
    def parse(cls, text: str, where: str) -> KeyRing:
        try:
            data = json.loads(text)
            shared = KeySet.from_dict(data)
            tenants = {str(t): KeySet.from_dict(v) for t, v in data.get("tenants", {}).items()}
        except (ValueError, KeyError, TypeError, AttributeError, binascii.Error):
            raise KeyRingError(f"{where}: {_FORMAT}") from None
        return cls(active=shared.active, keys=shared.keys, tenants=tenants)

    def to_json(self) -> str:
        data = self.to_dict()
        if self.tenants:
            data["tenants"] = {t: s.to_dict() for t, s in self.tenants.items()}
        return json.dumps(data, indent=2)

    def active_for(self, tenant: str | None) -> str:
        """The key id that encrypts ``tenant``'s payloads (None: no tenant, the shared key)."""
        key_set = self.tenants.get(tenant) if tenant is not None else None
        return (key_set or self).active

    def all_keys(self) -> dict[str, bytes]:
        """Every key id in the ring with its key: what decrypts."""
        found = dict(self.keys)
        for key_set in self.tenants.values():
            found.update(key_set.keys)
        return found

    def rotated(self, key_id: str, tenant: str | None = None) -> KeyRing:
        """A ring whose new random key ``key_id`` encrypts for ``tenant`` (None: the shared
        set; a tenant not listed yet gets its first own key); old keys still decrypt."""
        if key_id in self.all_keys():
            raise KeyRingError(f"key ring: key {key_id!r} exists already")
        if tenant is None:
            shared = self.with_new_key(key_id)
            return dataclasses.replace(self, active=shared.active, keys=shared.keys)
        old = self.tenants.get(tenant)
        fresh = KeySet(key_id, {key_id: secrets.token_bytes(32)})
        line = old.with_new_key(key_id) if old else fresh
        return dataclasses.replace(self, tenants={**self.tenants, tenant: line})

    def without_tenant(self, tenant: str) -> KeyRing:
        """The ring with ``tenant``'s keys gone: its histories can no longer be read."""
        if tenant not in self.tenants:
            raise KeyRingError(f"key ring: tenant {tenant!r} has no keys of its own")
        return dataclasses.replace(
            self, tenants={t: s for t, s in self.tenants.items() if t != tenant})


def new_key_ring(key_id: str = "k1", tenants: Iterable[str] = ()) -> KeyRing:
    """A ring with one random shared key and one random key per tenant (``<tenant>-1``)."""
    ring = KeyRing(active=key_id, keys={key_id: secrets.token_bytes(32)})
    for tenant in tenants:
        ring = ring.rotated(f"{tenant}-1", tenant)
    return ring


def load_key_ring(codec: CodecSettings) -> KeyRing:
    """The key ring named by ``TOLLGATE_KEYS`` or ``TOLLGATE_KEYS_FILE`` (see the module doc)."""
    if codec.keys:
        return KeyRing.parse(codec.keys.get_secret_value(), "TOLLGATE_KEYS")
    path = codec.keys_path
    if not path.exists():
        raise KeyRingError(f"payload key ring not found: {path} (run `tollgate dev` once, or "
                           "set TOLLGATE_KEYS_FILE or TOLLGATE_KEYS)")
    return KeyRing.parse(path.read_text(), str(path))


def ensure_keys_file(path: Path, tenants: Iterable[str] = ()) -> None:
    """The dev stack's key ring: made once (0600) with random keys, a key of its own for each
    of ``tenants``; kept beside the tenant keys."""
    if not path.exists():
        write_private(path, new_key_ring(tenants=tenants).to_json())

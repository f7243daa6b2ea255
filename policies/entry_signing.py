"""HMAC-SHA256 over a stream entry's fields, for events that carry no signature of their own.

A CloudEvent has no place for Tollgate's envelope signature, and on a Redis stream there is no
transport that vouches for the producer (an HTTP post carries its tenant's HMAC header). So a
CloudEvent entry carries a ``signature`` field: ``sha256=`` and the hex HMAC, under its tenant's
key, of every other field of the entry. The canonical bytes are the fields sorted by name, each
name and value preceded by its length, so no two different entries share them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from policies.signing import SIGNATURE_PREFIX

SIGNATURE_FIELD = b"signature"


def canonical_entry(fields: Mapping[bytes, bytes]) -> bytes:
    parts = []
    for name in sorted(k for k in fields if k != SIGNATURE_FIELD):
        value = fields[name]
        parts.append(b"%d:%s%d:%s" % (len(name), name, len(value), value))
    return b"".join(parts)


def sign_entry(fields: Mapping[bytes, bytes], secret: str) -> str:
    digest = hmac.new(secret.encode(), canonical_entry(fields), hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def verify_entry(fields: Mapping[bytes, bytes], secret: str) -> bool:
    given = fields.get(SIGNATURE_FIELD)
    if given is None:
        return False
    return hmac.compare_digest(given, sign_entry(fields, secret).encode())

"""A stream entry's signature covers every field but itself, under the tenant's key."""

from __future__ import annotations

from policies.entry_signing import canonical_entry, sign_entry, verify_entry

FIELDS = {b"body": b'{"id": "e-1"}', b"ce-tenant": b"acme", b"content-type": b"application/json"}


def signed(fields: dict[bytes, bytes]) -> dict[bytes, bytes]:
    return {**fields, b"signature": sign_entry(fields, "k").encode()}


def test_a_signed_entry_verifies_and_the_signature_field_is_not_signed() -> None:
    entry = signed(FIELDS)
    assert verify_entry(entry, "k")
    assert canonical_entry(entry) == canonical_entry(FIELDS)


def test_any_changed_added_or_removed_field_or_another_key_fails() -> None:
    entry = signed(FIELDS)
    assert not verify_entry({**entry, b"ce-tenant": b"globex"}, "k")
    assert not verify_entry({**entry, b"ce-subject": b"C-2"}, "k")
    assert not verify_entry({k: v for k, v in entry.items() if k != b"content-type"}, "k")
    assert not verify_entry(entry, "other key")
    assert not verify_entry(FIELDS, "k")  # no signature at all


def test_field_boundaries_are_part_of_what_is_signed() -> None:
    assert canonical_entry({b"ab": b"c"}) != canonical_entry({b"a": b"bc"})
    assert canonical_entry({b"a": b"1", b"b": b""}) != canonical_entry({b"a": b"1b"})

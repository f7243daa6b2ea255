"""The context step reads only the facts the action's policy names (issue 17, item 6)."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.context import LEGACY_FIELDS, _fields
from contracts import CustomerRecord

RECORD = CustomerRecord(
    tenant_id="acme", customer_id="C-1", first_name="Lan", pet_name="Miu", locale="vi",
    consent_messaging=True, updated_at=datetime(2026, 11, 30, tzinfo=UTC),
    notes="prefers evenings", phone="0912 345 678", email="lan@example.com",
    address="12 Le Loi",
)
PAYLOAD = {"customer_id": "C-1", "reminder_kind": "vaccination", "due_at": "2026-12-01",
           "notes": "second dose", "internal_score": 7}


def test_only_the_named_fields_are_read_and_blank_or_missing_ones_are_absent() -> None:
    names = ("crm.first_name", "crm.notes", "event.due_at", "event.channel")

    assert _fields(RECORD, PAYLOAD, names) == {
        "crm.first_name": "Lan", "crm.notes": "prefers evenings", "event.due_at": "2026-12-01"}


def test_contact_data_is_read_only_when_named() -> None:
    assert "crm.phone" not in _fields(RECORD, PAYLOAD, LEGACY_FIELDS)
    assert _fields(RECORD, PAYLOAD, ("crm.phone", "crm.email"))["crm.phone"] == "0912 345 678"


def test_a_rule_from_before_the_field_list_gets_the_old_set() -> None:
    assert set(_fields(RECORD, PAYLOAD, LEGACY_FIELDS)) == {
        "crm.first_name", "crm.locale", "crm.pet_name", "event.reminder_kind", "event.due_at",
        "event.notes"}

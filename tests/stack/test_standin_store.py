"""The stand-ins given a data folder keep their records across a restart (issue 18 item 3)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from adapters.http.crm import CrmHttpSource
from tollgate.dev.standins import StoreError, start_standins

MESSAGE = {"tenant_id": "acme", "recipient_ref": "C-1001", "channel": "sms",
           "body": "Miu is due for a vaccination tomorrow.", "correlation_id": "corr-1"}


def test_messages_and_their_keys_survive_a_restart(tmp_path: Path) -> None:
    with start_standins(data_dir=tmp_path) as first:
        sent = httpx.post(f"{first.messaging_url}/messages", json=MESSAGE,
                          headers={"Idempotency-Key": "acme:evt-1:messaging:send"})
        assert sent.status_code == 201

    with start_standins(data_dir=tmp_path) as again:
        found = httpx.get(f"{again.messaging_url}/messages/by-key/acme:evt-1:messaging:send")
        resent = httpx.post(f"{again.messaging_url}/messages", json=MESSAGE,
                            headers={"Idempotency-Key": "acme:evt-1:messaging:send"})
        count = httpx.get(f"{again.messaging_url}/messages/count").json()["count"]

    assert found.status_code == 200 and found.json() == sent.json()
    # The key still dedupes after the restart: the same stored message, not a second one.
    assert resent.status_code == 200 and resent.json()["id"] == sent.json()["id"]
    assert count == 1


async def test_customers_with_contact_fields_survive_a_restart(tmp_path: Path) -> None:
    with start_standins(data_dir=tmp_path) as first:
        first.crm.seed_demo()
        put = httpx.put(f"{first.crm_url}/tenants/acme/customers/C-7",
                        json={"first_name": "Hoa", "consent_messaging": True,
                              "phone": "+1 202 555 0111", "notes": "Call before noon."})
        assert put.status_code == 201

    with start_standins(data_dir=tmp_path) as again:
        raw = httpx.get(f"{again.crm_url}/tenants/acme/customers/C-7").json()
        lan = httpx.get(f"{again.crm_url}/tenants/acme/customers/C-1001").json()
        source = CrmHttpSource(again.crm_url)
        try:
            record = await source.fetch_customer("acme", "C-7")
        finally:
            await source.aclose()

    assert (raw["phone"], raw["notes"], raw["consent_messaging"]) == (
        "+1 202 555 0111", "Call before noon.", True)
    assert lan["email"] and lan["address"] and lan["notes"]  # the demo seed is filled in
    # The context adapter reads the record it needs and ignores the CRM's extra fields.
    assert record is not None and record.first_name == "Hoa" and record.consent_messaging


def test_without_a_data_folder_a_restart_starts_empty() -> None:
    with start_standins() as first:
        first.crm.seed_demo()
    with start_standins() as again:
        assert again.crm.get("acme", "C-1001") is None


def test_an_unreadable_store_file_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "crm.sqlite3").write_bytes(b"this is not a database file, it is text" * 50)
    with pytest.raises(StoreError) as info:
        start_standins(data_dir=tmp_path)
    assert "crm.sqlite3" in str(info.value) and "\n" not in str(info.value)

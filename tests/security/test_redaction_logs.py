"""Logs: JSON lines, every library's logger through the same redaction, deep and by pattern."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
import structlog

from policies.redaction import personal_data_kind, scrub_deep
from tollgate.intake.submit import workflow_id_for
from tollgate.observability.logs import configure_logging

PHONES = ["+84 912 345 678", "+84912345678", "84912345678", "0912345678", "0912 345 678",
          "0912.345.678", "091-234-5678", "(+84) 912-345-678", "912 345 678"]


@pytest.mark.parametrize("phone", PHONES)
def test_phone_numbers_are_masked_in_every_format(phone: str) -> None:
    out = scrub_deep({"event": f"ring {phone} today", "items": [{"x": phone}]})
    assert "345" not in json.dumps(out)


def test_redaction_is_deep_and_by_field_name() -> None:
    out = scrub_deep({
        "outer": {"list": [{"deeper": ("mail lan.nguyen@example.vn",)}]},
        "first_name": "Lan", "pet_name": "Mochi", "workflow_id": "event/acme/k-1",
        "error": ValueError("no route to lan.nguyen@example.vn"), "count": 3,
    })
    text = json.dumps(out)
    assert "lan.nguyen" not in text and "Lan" not in text and "Mochi" not in text
    assert out["workflow_id"] == "event/acme/k-1" and out["count"] == 3
    assert out["error"] == "ValueError: no route to [email]"


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging(logging.INFO, stream=stream)
    yield stream
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    structlog.reset_defaults()


def test_structlog_and_library_loggers_write_redacted_json_lines(log_stream: io.StringIO) -> None:
    structlog.get_logger("tollgate.test").info("sent to 0912 345 678", meta={"to": "a@b.vn"})
    logging.getLogger("temporalio.activity").warning("activity for %s failed", "+84 912 345 678")
    logging.getLogger("asyncpg").info("row", extra={"email": "x@y.vn"})
    try:
        raise RuntimeError("lookup of lan@example.vn failed")
    except RuntimeError:
        logging.getLogger("temporalio.worker").exception("task failed")
    lines = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert [line["logger"] for line in lines] == [
        "tollgate.test", "temporalio.activity", "asyncpg", "temporalio.worker"]
    text = log_stream.getvalue()
    for secret in ("345 678", "912345678", "a@b.vn", "x@y.vn", "lan@example.vn"):
        assert secret not in text
    assert "RuntimeError: lookup of [email] failed" in lines[3]["exception"]


@pytest.mark.parametrize(("key", "kind"), [
    ("0912345678", "phone"), ("0912.345.678", "phone"), ("care-84912345678", "phone"),
    ("lan@example.vn", "email"), ("care-C-1001-20261130101010", None), ("rec-ok", None),
])
def test_idempotency_keys_that_look_personal_are_named(key: str, kind: str | None) -> None:
    assert personal_data_kind(key) == kind


def test_a_personal_key_never_becomes_a_workflow_id() -> None:
    event = {"tenant_id": "acme", "idempotency_key": "0912345678", "payload": {}}
    wf_id = workflow_id_for(json.dumps(event))
    assert wf_id.startswith("quarantine/") and "0912345678" not in wf_id


def test_the_tests_random_keys_never_look_like_personal_data() -> None:
    """``tests.conftest.fresh_key`` names most test events; a key that looked like a phone
    number was quarantined and failed a test about something else (``k-0912345678`` does)."""
    from tests.conftest import fresh_key

    assert personal_data_kind("k-0912345678") == "phone"
    assert all(personal_data_kind(fresh_key()) is None for _ in range(20_000))

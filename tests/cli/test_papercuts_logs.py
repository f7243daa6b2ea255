"""A log line can be matched to its run in the Web UI: run ids and update ids (dashed UUIDs)
and ISO timestamps pass redaction as they are; tokens, phone numbers and e-mails do not."""

from __future__ import annotations

import io
import json
import logging
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
import structlog

from tollgate.observability.logs import configure_logging


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging(logging.INFO, stream=stream)
    yield stream
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    structlog.reset_defaults()


def test_run_ids_update_ids_and_timestamps_survive_redaction(log_stream: io.StringIO) -> None:
    run_id, update = str(uuid.uuid4()), f"intake-{uuid.uuid4()}"
    at = datetime(2026, 12, 1, 9, 30, 5, 123456, tzinfo=UTC)
    structlog.get_logger("tollgate.test").info(
        "update taken", run_id=run_id, update_id=update, due=at, at_text=at.isoformat())
    logging.getLogger("temporalio.workflow").warning(
        "run %s of event/acme/k-1 retried update %s at %s", run_id, update, at)
    first, second = (json.loads(line) for line in log_stream.getvalue().splitlines())
    assert (first["run_id"], first["update_id"]) == (run_id, update)
    assert first["due"] == str(at) and first["at_text"] == at.isoformat()
    assert second["event"] == (f"run {run_id} of event/acme/k-1 retried update {update} "
                               f"at {at}")
    assert "[token]" not in log_stream.getvalue() and "[phone]" not in log_stream.getvalue()


def test_real_tokens_and_phone_numbers_stay_redacted(log_stream: io.StringIO) -> None:
    secret = uuid.uuid4().hex  # a token_hex-shaped secret: 32 bare hex digits
    structlog.get_logger("tollgate.test").warning(
        f"run {uuid.uuid4()} called 0912 345 678 with {secret} for lan.nguyen@example.vn"
        " at 2026-12-01T09:30:05Z", seen="sk-proj-abcdefghijklmnopqrstuvwx")
    text = log_stream.getvalue()
    for leaked in ("345 678", secret, "lan.nguyen", "abcdefghijklmnop"):
        assert leaked not in text
    assert "2026-12-01T09:30:05Z" in text

"""The one Retry-After reader every target and model provider uses for a 429."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from email.utils import formatdate

import pytest

from adapters.http.common import retry_after

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "20"}, 20.0),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "86400"}, 600.0),  # capped: a bad header cannot park a record for a day
        ({"Retry-After": "Thu, 01 Jan 2026 12:00:30 GMT"}, 30.0),
        ({"Retry-After": "Thu, 01 Jan 2026 11:00:00 GMT"}, 0.0),  # a date in the past
        ({"retry-after": "soon"}, 5.0),
        ({"retry-after": "nan"}, 5.0),
        ({"retry-after": "-3"}, 5.0),
        ({"retry-after-ms": "later"}, 5.0),
        ({}, 5.0),
    ],
)
def test_header_forms(headers: dict[str, str], seconds: float) -> None:
    assert retry_after(headers, default=5.0, now=NOW) == seconds


def test_each_caller_picks_its_default() -> None:
    assert retry_after({}, default=1.0) == 1.0


def test_http_date_against_the_real_clock() -> None:
    header = {"retry-after": formatdate(time.time() + 30, usegmt=True)}

    assert 25 <= retry_after(header, default=5.0) <= 31

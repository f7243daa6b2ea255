"""``python -m tests.faults.worker_entry``: ``worker.py`` in its own process, with the messaging
adapter declaring the test's target mode (``TOLLGATE_TEST_TARGET_DEDUPES=0``: it does not dedupe),
as the in-process fixtures do with a monkeypatch."""

from __future__ import annotations

import os
import sys

import worker
from adapters.messaging_http import MessagingHttpAdapter

if __name__ == "__main__":
    MessagingHttpAdapter.dedupes_by_key = os.environ.get("TOLLGATE_TEST_TARGET_DEDUPES") != "0"
    worker.main(sys.argv[1:])

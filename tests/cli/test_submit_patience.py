"""An event no worker takes: `tollgate submit` says so in one line and exits 3 after its
patience, instead of waiting for ever (a decision does the same: test_review_decision_patience).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import signed_event
from tollgate.cli.submit import answered
from tollgate.config.settings import Settings
from tollgate.runtime.exits import Exit, Failure

pytestmark = pytest.mark.e2e


async def test_an_event_no_worker_takes_ends_in_one_line(
        dev_server: WorkflowEnvironment) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"  # no worker polls it
    settings = Settings.from_env({"TOLLGATE_TASK_QUEUE": queue})
    with pytest.raises(Failure) as failed:
        await answered(dev_server.client, settings, signed_event(customer="C-1001"), None, 1, 3,
                       timedelta(seconds=1))
    assert failed.value.code == Exit.UNREACHABLE
    message = failed.value.message
    assert message.startswith("event 1 of 3: no answer within 1 s (no worker polls task queue "
                              f"{queue})")
    assert "events 2-3 were not sent" in message and "duplicate" in message
    assert "\n" not in message and "C-1001" not in message

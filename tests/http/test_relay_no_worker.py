"""The outbox relay against a real Temporal server that no worker serves: the intake update
nobody answers is an outage ("no_worker"), never the row's own failure. The SDK reports the
update call that ``wait_for`` cancelled as an error of its own, not as ``TimeoutError``; read
as the row's failure, it counted tries against rows that were fine and moved them aside after
``MAX_DELIVERY_ATTEMPTS`` while the workers were merely down."""

from __future__ import annotations

import uuid

import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import signed_event
from tollgate.http import relay

pytestmark = pytest.mark.e2e


async def test_an_intake_no_worker_answers_is_an_outage_not_the_rows_failure(
        dev_server: WorkflowEnvironment) -> None:
    queue = f"tq-{uuid.uuid4().hex[:8]}"  # no worker polls it
    with pytest.raises(relay.Unreachable) as caught:
        await relay._send(dev_server.client, signed_event(), queue, timeout_s=1.0)
    assert str(caught.value) == "no_worker"

"""Awaiting a run's result on the time-skipping test server with time skipping.

A ``get_workflow_handle()`` handle's ``result()`` does not unlock time skipping (only the handle
``start_workflow`` returns does; docs/testing.md): awaited plainly, a retry backoff or a timer in
the run takes real time. Unlocked around the wait, it passes in an instant.
"""

from __future__ import annotations

from typing import Any

from temporalio.api.testservice.v1 import LockTimeSkippingRequest, UnlockTimeSkippingRequest
from temporalio.client import Client, WorkflowHandle


async def skipping_result(client: Client, handle: WorkflowHandle[Any, Any]) -> Any:
    """``handle.result()`` with time skipping while it is awaited."""
    await client.test_service.unlock_time_skipping(UnlockTimeSkippingRequest())
    try:
        return await handle.result()
    finally:
        await client.test_service.lock_time_skipping(LockTimeSkippingRequest())

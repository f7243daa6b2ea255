"""A bounded wait on the CLI's Temporal calls: a paused or wedged server (one that accepts the
connection and never answers) ends a command with its exit-3 line instead of a hang.

The SDK sets no deadline of its own on most calls, so a command's list, describe or query would
wait forever. ``with_deadline`` gives each read call ``TOLLGATE_CLI_TIMEOUT`` unless the call
names its own. Calls that wait on purpose keep no deadline: a workflow's result (a long poll of
its history), an update or a start (they wait for the worker's answer, which `submit` and the
decisions report as they come).
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any

from temporalio.client import (
    Client,
    CountWorkflowsInput,
    DescribeWorkflowInput,
    FetchWorkflowHistoryEventsInput,
    Interceptor,
    ListWorkflowsInput,
    OutboundInterceptor,
    QueryWorkflowInput,
    SignalWorkflowInput,
)


def _bounded(input: Any, timeout: timedelta) -> Any:
    return input if input.rpc_timeout else dataclasses.replace(input, rpc_timeout=timeout)


class _Outbound(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, timeout: timedelta) -> None:
        super().__init__(next)
        self.timeout = timeout

    async def describe_workflow(self, input: DescribeWorkflowInput) -> Any:
        return await self.next.describe_workflow(_bounded(input, self.timeout))

    def list_workflows(self, input: ListWorkflowsInput) -> Any:
        return self.next.list_workflows(_bounded(input, self.timeout))

    async def count_workflows(self, input: CountWorkflowsInput) -> Any:
        return await self.next.count_workflows(_bounded(input, self.timeout))

    async def query_workflow(self, input: QueryWorkflowInput) -> Any:
        return await self.next.query_workflow(_bounded(input, self.timeout))

    async def signal_workflow(self, input: SignalWorkflowInput) -> None:
        await self.next.signal_workflow(_bounded(input, self.timeout))

    def fetch_workflow_history_events(self, input: FetchWorkflowHistoryEventsInput) -> Any:
        # A result() waits for new events on purpose; only a plain read of history is bounded.
        if input.wait_new_event:
            return self.next.fetch_workflow_history_events(input)
        return self.next.fetch_workflow_history_events(_bounded(input, self.timeout))


class RpcDeadline(Interceptor):
    def __init__(self, timeout: timedelta) -> None:
        self.timeout = timeout

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Outbound(next, self.timeout)


def with_deadline(client: Client, timeout: timedelta) -> Client:
    """The same connection, its read calls bounded by ``timeout``."""
    config = client.config()
    config["interceptors"] = [*config["interceptors"], RpcDeadline(timeout)]
    return Client(**config)

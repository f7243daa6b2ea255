"""The one way to build a Temporal client: worker, starter, CLI and tests all use it."""

from __future__ import annotations

from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter


async def build_client(address: str, namespace: str = "default") -> Client:
    return await Client.connect(address, namespace=namespace,
                                data_converter=pydantic_data_converter)

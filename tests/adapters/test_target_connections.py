"""Each HTTP port keeps at most ``connections`` connections to its target
(``TOLLGATE_TARGET_CONNECTIONS``, docs/deploy.md): a burst of calls queues for them instead of
opening one connection per call, every call still gets its answer, and a call that finds none
free within its timeout is the port's ordinary timeout (retryable)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from adapters.http.common import DEFAULT_CONNECTIONS
from adapters.http.crm import CrmHttpSource
from contracts.errors import RetryableError
from tollgate.config.settings import Settings


@dataclass
class _Target:
    """A CRM on loopback that answers after ``delay`` and counts the connections it holds."""

    delay: float
    url: str = ""
    open_now: int = 0
    most_open: int = 0
    opened: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.opened += 1
        self.open_now += 1
        self.most_open = max(self.most_open, self.open_now)
        try:
            while request := await reader.readline():
                customer = request.split(b" ")[1].rsplit(b"/", 1)[-1].decode()
                while await reader.readline() not in (b"\r\n", b""):
                    pass
                await asyncio.sleep(self.delay)
                body = json.dumps({"tenant_id": "acme", "customer_id": customer,
                                   "first_name": "An", "consent_messaging": True,
                                   "updated_at": "2026-12-01T09:00:00+00:00"}).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.open_now -= 1
            writer.close()


@pytest.fixture
async def target() -> AsyncIterator[_Target]:
    found = _Target(delay=0.05)
    server = await asyncio.start_server(found.handle, "127.0.0.1", 0)
    found.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    yield found
    server.close()


async def test_a_burst_of_calls_shares_the_ports_few_connections(target: _Target) -> None:
    crm = CrmHttpSource(target.url, timeout=5.0, connections=3)
    try:
        records = await asyncio.gather(*(crm.fetch_customer("acme", f"c-{n}")
                                         for n in range(12)))
    finally:
        await crm.aclose()
    assert [r.customer_id for r in records if r] == [f"c-{n}" for n in range(12)]
    assert target.most_open <= 3 and target.opened <= 3


async def test_a_call_that_finds_no_connection_in_time_is_a_retryable_timeout(
    target: _Target,
) -> None:
    target.delay = 1.0
    crm = CrmHttpSource(target.url, timeout=0.3, connections=1)
    try:
        results = await asyncio.gather(crm.fetch_customer("acme", "c-1"),
                                       crm.fetch_customer("acme", "c-2"),
                                       return_exceptions=True)
    finally:
        await crm.aclose()
    assert all(isinstance(r, RetryableError) and r.code == "crm_timeout" for r in results)
    assert target.opened == 1


def test_the_workers_ports_take_the_setting_and_its_default_is_the_ports(tmp_path: object) -> None:
    assert Settings.from_env({}).targets.connections == DEFAULT_CONNECTIONS
    assert Settings.from_env({"TOLLGATE_TARGET_CONNECTIONS": "4"}).targets.connections == 4

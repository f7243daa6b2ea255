"""For the tests of the PostgreSQL-backed figures: the ``/metrics`` page as the exporter renders
it, read back into samples."""

from __future__ import annotations

import asyncio

import asyncpg
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.registry import CollectorRegistry

from tollgate.observability.metrics import PostgresCollector


async def scrape(pool: asyncpg.Pool) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """The ``/metrics`` page, rendered off the loop as the exporter's thread renders it."""
    registry = CollectorRegistry()
    registry.register(PostgresCollector(pool, asyncio.get_running_loop()))
    text = (await asyncio.to_thread(generate_latest, registry)).decode()
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}

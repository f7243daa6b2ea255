"""Shared real parts for the tests: one embedded PostgreSQL per session (a fresh database per
test module), the stand-in targets, and helpers to build signed events."""

from __future__ import annotations

import json
import os
import secrets
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.standins import StandIns, start_standins
from policies.signing import sign_json
from tollgate.demo import care_due
from tollgate.devstack import start_embedded_postgres

TENANT_SECRETS = {"acme": secrets.token_hex(16), "globex": secrets.token_hex(16)}


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """An embedded PostgreSQL 18 unless DATABASE_URL points at another server."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    base = Path(tempfile.mkdtemp(prefix="tollgate-pg-"))
    server = start_embedded_postgres(base / "data", cleanup_mode="delete")
    yield server.get_uri()
    server.cleanup()


@pytest.fixture(scope="module")
async def database_url(pg_server: str) -> AsyncIterator[str]:
    """A fresh database per test module, so modules never see each other's rows."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(pg_server)
    await admin.execute(f'CREATE DATABASE "{name}"')
    await admin.close()
    yield _with_database(pg_server, name)


def _with_database(url: str, name: str) -> str:
    head, _, query = url.partition("?")
    base = head.rsplit("/", 1)[0]
    return f"{base}/{name}" + (f"?{query}" if query else "")


@pytest.fixture(scope="module")
def standins() -> Iterator[StandIns]:
    with start_standins() as s:
        s.crm.seed_demo()
        yield s


@pytest.fixture
def tenants_file(tmp_path: Path) -> Path:
    path = tmp_path / "tenants.json"
    path.write_text(json.dumps(TENANT_SECRETS))
    return path


def signed_event(customer: str = "C-1001", *, key: str | None = None, tenant: str = "acme",
                 version: int = 3, **overrides: Any) -> str:
    key = key or f"k-{uuid.uuid4().hex[:10]}"
    event = care_due(tenant, customer, key, version=version, now=datetime.now(UTC))
    event.update(overrides)
    return sign_json(json.dumps(event), TENANT_SECRETS)

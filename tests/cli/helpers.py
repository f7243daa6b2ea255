"""Running the real ``tollgate`` console script as a user would, and reading what it said."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from temporalio.testing import WorkflowEnvironment

from tests.conftest import TEST_KEYS_FILE, fresh_key, worker_settings
from tollgate.cli.common import classify, run_in_loop
from tollgate.cli.ops import ops
from tollgate.config.settings import Settings
from tollgate.dev.standins import StandIns
from tollgate.runtime.identity import issue_dev_token

ROOT = Path(__file__).resolve().parents[2]
TOLLGATE = str(Path(sys.executable).with_name("tollgate"))
#: What no answer of the CLI may contain, whatever the exit code.
NOISE = ("Traceback", "Fatal Python error", "Future exception was never retrieved")


@dataclass
class Said:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def clean(self) -> bool:
        return not any(marker in self.text for marker in NOISE)


def base_env(state_dir: Path, **extra: str) -> dict[str, str]:
    """The caller's environment without anything that points at other servers."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "TEMPORAL_ADDRESS", "TOLLGATE_CRM_URL",
                        "TOLLGATE_MESSAGING_URL", "TOLLGATE_TENANTS_FILE", "TOLLGATE_DEBUG")}
    # The test key ring: without one every command would stop at "no payload key ring".
    return {**env, "TOLLGATE_STATE_DIR": str(state_dir), "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
            **extra}


def tollgate(*args: str, env: dict[str, str], stdin: str | None = None,
             timeout: float = 60) -> Said:
    done = subprocess.run([TOLLGATE, *args], env=env, cwd=ROOT, input=stdin,  # noqa: S603
                          capture_output=True, text=True, timeout=timeout, check=False)
    return Said(done.returncode, done.stdout, done.stderr)


def ops_token(s: Settings, role: str, *, tenant: str = "acme", name: str = "op.kim") -> list[str]:
    """``--token`` for an operator command: a dev token of ``name`` holding ``role``, signed by
    the dev key of ``s``'s state folder (the one the command verifies with)."""
    return ["--token", issue_dev_token(s.state_dir, reviewer=name, role=role, tenant=tenant)]


async def run_ops(argv: list[str], s: Settings, *, role: str | None = None,
                  tenant: str = "acme", name: str = "op.kim") -> int:
    """``tollgate ops ARGV`` through its Click entry point, inside the test's event loop (the
    console script runs it in a loop of its own); with ``role``, as ``name`` holding a token of
    that role and ``tenant``."""
    if role is not None:
        argv = [*argv, *ops_token(s, role, tenant=tenant, name=name)]
    return await run_in_loop(ops.main(argv, prog_name="tollgate ops", standalone_mode=False), s)


async def said_by(capsys: pytest.CaptureFixture[str], s: Settings, command: click.Command,
                  *argv: str) -> tuple[int, str]:
    """A command run in this process: its exit code and what it printed, failing as the
    console script does (the runner's one-line catch-all)."""
    work: Any = command.main(list(argv), standalone_mode=False)
    try:
        code = int(await work(s))
    except BaseException as exc:
        failure = classify(exc, s)
        click.echo(f"tollgate: {failure.message}", err=True)
        code = int(failure.code)
    out = capsys.readouterr()
    return code, out.out + out.err


def live_settings(dev_server: WorkflowEnvironment, database_url: str, standins: StandIns,
                  state_dir: Path) -> tuple[Settings, str]:
    """Settings for the commands against ``dev_server`` on a queue of their own, and a
    customer of acme who consents to messages (so an event of theirs waits for review)."""
    queue = f"tq-{uuid.uuid4().hex[:8]}"
    s = worker_settings(database_url, standins, state_dir, queue,
                        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host)
    return s, consenting(standins)


def consenting(standins: StandIns) -> str:
    """A new customer of acme who consents to messages. Two events of one customer are one
    entity's: the one that occurred earlier may be superseded by the other (a flake when a test
    meant two independent reviews), so each review a test keeps open gets its own customer."""
    customer = fresh_key("C")
    standins.crm.upsert("acme", customer, first_name="Lan", pet_name="Miu",
                        consent_messaging=True)
    return customer

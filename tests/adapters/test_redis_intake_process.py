"""``python -m tollgate.runtime.redis_intake`` as a real process against a real redis-server
and the time-skipping Temporal server: SIGKILLed between XREADGROUP and XACK, its entry is
reclaimed by another consumer and the event is processed once; SIGTERM stops it cleanly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import asyncpg
import httpx
import redis.asyncio as aioredis
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from adapters.broker.redis_streams import RedisStreamIntake
from tests.adapters.redis_kit import Answers, Make, drain, key_of, rows_for
from tests.conftest import TENANT_SECRETS, TEST_KEYS_FILE, signed_event
from tests.eventually import eventually
from tests.ports import free_port
from tollgate.intake.redis_stream import entry_handler

ACCEPTED = b'"answer": "accepted"'


@contextmanager
def consumer_process(url: str, intake: RedisStreamIntake, env: WorkflowEnvironment,
                     queue: str, state: Path, health_port: int | None = None,
                     ) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The consumer process on ``intake``'s stream; its log (unbuffered) is the Path."""
    (state / "tenants.json").write_text(json.dumps(TENANT_SECRETS))
    variables = {
        "PATH": os.environ.get("PATH", ""), "TOLLGATE_STATE_DIR": str(state),
        "TEMPORAL_ADDRESS": env.client.service_client.config.target_host,
        "TOLLGATE_TASK_QUEUE": queue, "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
        "TOLLGATE_TENANTS_FILE": str(state / "tenants.json"), "TOLLGATE_REDIS_URL": url,
        "TOLLGATE_REDIS_STREAM": intake.stream, "TOLLGATE_REDIS_DEAD_STREAM": intake.dead_stream,
        "TOLLGATE_REDIS_CONSUMER": "process", "TOLLGATE_REDIS_CLAIM_IDLE_S": "600",
        "PYTHONUNBUFFERED": "1"}
    if health_port is not None:
        variables["TOLLGATE_REDIS_HEALTH_PORT"] = str(health_port)
    log = state / "consumer.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tollgate.runtime.redis_intake"], env=variables,
            stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).parents[2])
        try:
            yield proc, log
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(30)


async def test_a_consumer_process_sigkilled_before_its_ack_leaves_the_event_processed_once(
        make_stream_intake: Make, worker_client: tuple[Client, str], pool: asyncpg.Pool,
        redis_url: str, env: WorkflowEnvironment, tmp_path: Path) -> None:
    """Its Redis user may not XACK, so the process is caught after XREADGROUP and the durable
    start, and SIGKILLed there."""
    client, queue = worker_client
    survivor = await make_stream_intake("survivor")
    admin = aioredis.Redis.from_url(redis_url)
    await admin.execute_command("ACL", "SETUSER", "noack", "on", ">noack-pw", "~*", "&*",
                                "+@all", "-xack")
    await admin.aclose()
    raw = signed_event("C-1001")
    await survivor.publish({b"body": raw.encode()})
    no_ack_url = redis_url.replace("redis://", "redis://noack:noack-pw@")
    with consumer_process(no_ack_url, survivor, env, queue, tmp_path) as (proc, log):
        await eventually(lambda: ACCEPTED in log.read_bytes(), "the process's answer",
                         timeout=60)
        assert await rows_for(pool, key_of(raw)) == 1
        assert await survivor.pending() == 1  # read and started, never acked
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    answers = Answers(entry_handler(client, queue, TENANT_SECRETS))
    await drain(survivor, answers)
    assert answers == ["duplicate"]
    assert await rows_for(pool, key_of(raw)) == 1


async def test_a_consumer_process_answers_acks_and_stops_cleanly_on_sigterm(
        make_stream_intake: Make, worker_client: tuple[Client, str], pool: asyncpg.Pool,
        redis_url: str, env: WorkflowEnvironment, tmp_path: Path) -> None:
    _, queue = worker_client
    intake = await make_stream_intake("observer")
    raw = signed_event("C-1001")
    await intake.publish({b"body": raw.encode()})
    port = free_port()
    with consumer_process(redis_url, intake, env, queue, tmp_path, port) as (proc, log):
        await eventually(lambda: ACCEPTED in log.read_bytes(), "the process's answer",
                         timeout=60)
        await eventually(intake.pending, "the ack", until=lambda n: n == 0)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            ready, metrics = await http.get("/readyz"), await http.get("/metrics")
        assert ready.status_code == 200  # the stream's lag, from the process itself
        assert "tollgate_redis_pending{" in metrics.text
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    assert proc.returncode == 0
    assert b"Traceback" not in log.read_bytes()
    assert await rows_for(pool, key_of(raw)) == 1

"""The ``codec`` role as the image runs it, ``python -m tollgate.codec.server`` in a process of
its own: its log lines are redacted JSON like every other process's, a payload that opens to
something that is not a payload is a 400, and a port it cannot take is one line, not a
traceback (docs/deploy.md, "What a deployment starts, against the dev
stack"). In ``tollgate dev`` the codec server runs inside the stack's process, whose logging is
set up and whose ports are checked first; the role's own process did neither."""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from tests.conftest import TEST_KEYS_FILE
from tests.ports import free_port
from tollgate.codec.keyring import load_key_ring
from tollgate.codec.payload import ENCODING, KEY_ID_META
from tollgate.config.service import CodecSettings

TOKEN = "t" * 32


def role_env(port: int) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE),
            "TOLLGATE_CODEC_TOKEN": TOKEN, "TOLLGATE_CODEC_PORT": str(port)}


@contextmanager
def codec_role(port: int) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen([sys.executable, "-m", "tollgate.codec.server"], env=role_env(port),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "did not listen"
                time.sleep(0.1)
        yield proc
    finally:
        proc.terminate()
        proc.wait(15)


def sealed_garbage() -> dict[str, object]:
    """A payload under the ring's key that decrypts, to bytes that are not a payload."""
    ring = load_key_ring(CodecSettings.from_env({"TOLLGATE_KEYS_FILE": str(TEST_KEYS_FILE)}))
    key_id = ring.active_for(None)
    nonce = secrets.token_bytes(12)
    data = nonce + AESGCM(ring.all_keys()[key_id]).encrypt(nonce, b"\xff\xff\xff",
                                                           key_id.encode())
    b64 = base64.b64encode
    return {"payloads": [{"metadata": {"encoding": b64(ENCODING).decode(),
                                       KEY_ID_META: b64(key_id.encode()).decode()},
                          "data": b64(data).decode()}]}


def test_the_codec_role_logs_json_lines_and_refuses_a_sealed_non_payload() -> None:
    port = free_port()
    with codec_role(port) as proc:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/decode", data=json.dumps(sealed_garbage()).encode(),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10)  # noqa: S310 (http, built here)
        except urllib.error.HTTPError as exc:
            # A refusal that names the field's fault, never a 500 (it was one before).
            assert exc.code == 400
            assert json.loads(exc.read()) == {
                "error": "a payload opened to bytes that are not a payload"}
        else:
            raise AssertionError("a payload that is not one decoded")
    _, err = proc.communicate(timeout=15)
    lines = [line for line in err.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line one JSON object
    assert [r for r in records if r.get("event") == "codec_server_listening"] == [
        {"event": "codec_server_listening", "host": "127.0.0.1", "port": port,
         "level": "info", "logger": "tollgate.codec",
         "timestamp": next(r["timestamp"] for r in records
                           if r.get("event") == "codec_server_listening")}], records
    assert TOKEN not in err


def test_a_taken_port_is_one_line() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "tollgate.codec.server"],
                              env=role_env(port), capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"the codec server cannot listen on 127.0.0.1:{port} (address already in use); set "
        "TOLLGATE_CODEC_HOST or TOLLGATE_CODEC_PORT"], done.stderr

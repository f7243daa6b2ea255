"""The codec server decrypts for the UI and the CLI, and only for callers holding its token."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator

import httpx
import pytest
from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads

from contracts import ReviewDecision
from tests.conftest import CONVERTER, TEST_KEYS
from tollgate.codec.server import CodecServer, start_codec_server

UI = "http://127.0.0.1:8999"  # only an Origin header value; nothing listens there
DECISION = ReviewDecision(request_id="r-1", decision="approve", reviewer="lan.nguyen",
                          role="care_lead", reason="ok", draft_version=1)


@pytest.fixture(scope="module")
def server() -> Iterator[CodecServer]:
    s = start_codec_server(TEST_KEYS, origins=[UI])
    yield s
    s.stop()


async def _sealed_body() -> str:
    payloads = await CONVERTER.encode([DECISION])
    return json_format.MessageToJson(Payloads(payloads=payloads))


async def test_decode_with_the_bearer_token_gives_the_clear_payload(server: CodecServer) -> None:
    body = await _sealed_body()
    async with httpx.AsyncClient() as http:
        r = await http.post(f"{server.url}/decode", content=body, headers={
            "Authorization": f"Bearer {server.token}", "Content-Type": "application/json",
            "X-Namespace": "default"})
    assert r.status_code == 200
    out = json_format.Parse(r.text, Payloads())
    assert CONVERTER.payload_converter.from_payloads(out.payloads, [ReviewDecision]) == [DECISION]


async def test_the_ui_endpoint_carries_the_token_in_its_path(server: CodecServer) -> None:
    async with httpx.AsyncClient() as http:
        r = await http.post(f"{server.ui_endpoint}/decode", content=await _sealed_body(),
                            headers={"Origin": UI, "Content-Type": "application/json"})
    assert r.status_code == 200
    assert r.headers["Access-Control-Allow-Origin"] == UI
    assert json_format.Parse(r.text, Payloads()).payloads[0].metadata["encoding"] == b"json/plain"


@pytest.mark.parametrize("auth", [None, "Bearer wrong", "Basic abc"])
async def test_no_token_or_a_wrong_one_gets_nothing(server: CodecServer, auth: str | None) -> None:
    headers = {"Content-Type": "application/json", **({"Authorization": auth} if auth else {})}
    async with httpx.AsyncClient() as http:
        r = await http.post(f"{server.url}/decode", content=await _sealed_body(), headers=headers)
        wrong_path = await http.post(f"{server.url}/not-the-token/decode",
                                     content=await _sealed_body(), headers=headers)
    assert r.status_code == 401 and wrong_path.status_code == 401
    assert "payloads" not in r.text


async def test_cors_answers_the_ui_origin_only(server: CodecServer) -> None:
    ask = {"Access-Control-Request-Method": "POST",
           "Access-Control-Request-Headers": "content-type,x-namespace"}
    async with httpx.AsyncClient() as http:
        ours = await http.options(f"{server.ui_endpoint}/decode", headers={**ask, "Origin": UI})
        theirs = await http.options(f"{server.ui_endpoint}/decode",
                                    headers={**ask, "Origin": "http://evil.example"})
    assert ours.headers["Access-Control-Allow-Origin"] == UI
    assert "x-namespace" in ours.headers["Access-Control-Allow-Headers"]
    assert "Access-Control-Allow-Origin" not in theirs.headers


async def test_encode_round_trips_and_bad_input_is_a_clear_400(server: CodecServer) -> None:
    clear = CONVERTER.payload_converter.to_payloads([DECISION])
    auth = {"Authorization": f"Bearer {server.token}", "Content-Type": "application/json"}
    async with httpx.AsyncClient() as http:
        sealed = await http.post(f"{server.url}/encode", headers=auth,
                                 content=json_format.MessageToJson(Payloads(payloads=clear)))
        bad = await http.post(f"{server.url}/decode", headers=auth, content="{nope")
    payloads = json_format.Parse(sealed.text, Payloads()).payloads
    assert payloads[0].metadata["encoding"] == b"binary/encrypted"
    assert await CONVERTER.decode(payloads, [ReviewDecision]) == [DECISION]
    assert bad.status_code == 400 and "error" in bad.json()


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def _codec_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "codec-server" and t.is_alive()]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count open files")
def test_a_stopped_server_leaves_no_socket_selector_or_thread_behind() -> None:
    before, threads = _open_fds(), len(_codec_threads())
    s = start_codec_server(TEST_KEYS, origins=[UI])
    s.stop()
    # ``s`` is still held: what it opened must be closed by stop(), not by the collector.
    assert (_open_fds() - before, len(_codec_threads())) == (set(), threads)
    assert s.url


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc to count open files")
def test_a_start_on_a_taken_port_fails_and_leaves_nothing_running() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        before, threads = _open_fds(), len(_codec_threads())
        with pytest.raises(OSError):
            start_codec_server(TEST_KEYS, origins=[UI], port=taken.getsockname()[1])
        assert (_open_fds() - before, len(_codec_threads())) == (set(), threads)

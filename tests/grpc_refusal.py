"""A loopback gRPC endpoint that answers every call with one status (PERMISSION_DENIED,
UNAUTHENTICATED, ...), for what a client sees from a Temporal frontend whose authorizer or
claim mapper turns it away: the dev server has neither, and no gRPC server library is installed.

It speaks just enough HTTP/2 (RFC 9113) for a gRPC client: the settings exchange, pings, and a
trailers-only answer (``:status 200``, ``grpc-status``, ``grpc-message``) to each request's
HEADERS, its header block written as HPACK literals without Huffman coding (RFC 7541 6.2.2).
It cannot read the method (the request's header block may be Huffman coded), so ``admit_first``
answers each connection's first call with an empty message instead: the SDK's connect asks
``GetSystemInfo`` first, so the refusal then comes on the calls after it, as from a server that
lets anyone connect and checks each namespace call."""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import AsyncIterator

from adapters.broker.cancel import within

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, SETTINGS, PING, GOAWAY = 0x0, 0x1, 0x4, 0x6, 0x7
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
STATUS_200 = b"\x88"  # HPACK static table entry 8


def _frame(kind: int, flags: int, stream: int, payload: bytes = b"") -> bytes:
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(
        ">I", stream) + payload


def _literal(name: str, value: str) -> bytes:
    def text(s: str) -> bytes:
        raw = s.encode()
        assert len(raw) < 127  # a one-byte length, H bit clear
        return bytes([len(raw)]) + raw

    return b"\x00" + text(name) + text(value)


def trailers(status: int, message: str) -> bytes:
    return STATUS_200 + b"".join(_literal(n, v) for n, v in (
        ("content-type", "application/grpc"), ("grpc-status", str(status)),
        ("grpc-message", message)))


def _answer(stream: int, status: int, message: str, admitted: bool) -> bytes:
    if not admitted:
        return _frame(HEADERS, END_STREAM | END_HEADERS, stream, trailers(status, message))
    # Headers, one empty length-prefixed message, then the trailers with status 0.
    return (_frame(HEADERS, END_HEADERS, stream,
                   STATUS_200 + _literal("content-type", "application/grpc"))
            + _frame(DATA, 0, stream, b"\x00" + struct.pack(">I", 0))
            + _frame(HEADERS, END_STREAM | END_HEADERS, stream, _literal("grpc-status", "0")))


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int,
                 message: str, admit_first: bool) -> None:
    calls = 0
    with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
        if await reader.readexactly(len(PREFACE)) != PREFACE:
            return
        writer.write(_frame(SETTINGS, 0, 0))
        while True:
            head = await reader.readexactly(9)
            length = int.from_bytes(head[:3], "big")
            kind, flags = head[3], head[4]
            stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
            payload = await reader.readexactly(length)
            if kind == SETTINGS and not flags & ACK:
                writer.write(_frame(SETTINGS, ACK, 0))
            elif kind == PING and not flags & ACK:
                writer.write(_frame(PING, ACK, 0, payload))
            elif kind == HEADERS:
                calls += 1
                writer.write(_answer(stream, status, message, admit_first and calls == 1))
            elif kind == GOAWAY:
                return
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def refusing(status: int, message: str, *,
                   admit_first: bool = False) -> AsyncIterator[str]:
    """``host:port`` of an endpoint answering every gRPC call ``status`` (its number)."""
    server = await asyncio.start_server(
        lambda r, w: _serve(r, w, status, message, admit_first), "127.0.0.1", 0)
    try:
        yield f"127.0.0.1:{server.sockets[0].getsockname()[1]}"
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await within(server.wait_closed(), 2)

"""Codec server: decrypts payloads for the Temporal Web UI and the `temporal` CLI.

Speaks Temporal's remote-codec protocol: ``POST /encode`` and ``POST /decode`` take and return
``{"payloads": [...]}`` (protobuf JSON of ``Payloads``). Only callers holding the token get
plaintext: either ``Authorization: Bearer <token>`` (the CLI's ``--codec-auth``) or the token as
the first path segment, ``/<token>/decode``, because the dev server's UI has no way to add a
header of our choosing to its codec calls. CORS answers only the UI's own origins.

It runs in a thread with its own event loop, so a synchronous stack can start it before the
Temporal dev server that must be told where it is.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import structlog
from aiohttp import web
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from temporalio.api.common.v1 import Payload, Payloads

from tollgate.codec.files import write_private
from tollgate.codec.keyring import KeyRing, ensure_keys_file, load_key_ring
from tollgate.codec.payload import EncryptionCodec
from tollgate.config.service import CodecSettings
from tollgate.config.settings import process_env

Transform = Callable[[Sequence[Payload]], Awaitable[list[Payload]]]
_ALLOWED_HEADERS = "authorization,content-type,x-namespace"


def build_app(ring: KeyRing, token: str, origins: Iterable[str]) -> web.Application:
    codec = EncryptionCodec(ring)
    allowed = frozenset(origins)

    def cors(request: web.Request, response: web.StreamResponse) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin in allowed:
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Access-Control-Allow-Methods"] = "POST, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = _ALLOWED_HEADERS
            response.headers["Access-Control-Allow-Credentials"] = "true"
            response.headers["Vary"] = "Origin"
        return response

    def authorised(request: web.Request) -> bool:
        given = request.match_info.get("token", "")
        header = request.headers.get("Authorization", "")
        if header.lower().startswith("bearer "):
            given = given or header[7:].strip()
        return bool(given) and hmac.compare_digest(given.encode(), token.encode())

    async def preflight(request: web.Request) -> web.StreamResponse:
        # A browser's preflight never carries credentials; it learns only what CORS allows.
        return cors(request, web.Response(status=204))

    def endpoint(transform: Transform) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            if not authorised(request):
                return cors(request, web.json_response({"error": "unauthorised"}, status=401))
            try:
                payloads = json_format.Parse(await request.read(), Payloads())
                out = Payloads(payloads=await transform(payloads.payloads))
            except (json_format.ParseError, ValueError) as exc:
                # The message names a key id or says the body is not Payloads JSON: no data.
                return cors(request, web.json_response({"error": str(exc)}, status=400))
            except DecodeError:  # sealed under our key, but what it seals is not a payload
                return cors(request, web.json_response(
                    {"error": "a payload opened to bytes that are not a payload"}, status=400))
            return cors(request, web.Response(text=json_format.MessageToJson(out),
                                              content_type="application/json"))
        return handle

    app = web.Application(client_max_size=8 * 1024 * 1024)
    for prefix in ("", "/{token}"):
        app.router.add_post(f"{prefix}/encode", endpoint(codec.encode))
        app.router.add_post(f"{prefix}/decode", endpoint(codec.decode))
        app.router.add_route("OPTIONS", f"{prefix}/encode", preflight)
        app.router.add_route("OPTIONS", f"{prefix}/decode", preflight)
    return app


@dataclass
class CodecServer:
    """A running codec server. ``ui_endpoint`` carries the token in its path (for the UI);
    ``url`` wants ``Authorization: Bearer <token>`` (for the CLI and scripts)."""

    url: str
    token: str = field(repr=False)
    _loop: asyncio.AbstractEventLoop = field(repr=False)
    _runner: web.AppRunner = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    @property
    def ui_endpoint(self) -> str:
        return f"{self.url}/{self.token}"

    def stop(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        finally:
            _end(self._loop, self._thread)


def _end(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    """Stop the server's loop and close it: an unclosed loop keeps its selector and wake-up
    sockets open until the garbage collector finds it, and then complains on stderr."""
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    if not thread.is_alive():
        loop.close()


def start_codec_server(ring: KeyRing, *, origins: Iterable[str], port: int = 0,
                       token: str | None = None) -> CodecServer:
    """Start on 127.0.0.1 (``port`` 0: a free one) in a daemon thread; stop with ``.stop()``."""
    token = token or secrets.token_urlsafe(24)
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(build_app(ring, token, origins), access_log=None)

    async def open_site() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port)
        await site.start()
        return int(runner.addresses[0][1])

    thread = threading.Thread(target=loop.run_forever, name="codec-server", daemon=True)
    thread.start()
    try:
        bound = asyncio.run_coroutine_threadsafe(open_site(), loop).result(30)
    except BaseException:
        _end(loop, thread)  # a port taken, say: nothing left running or open behind the error
        raise
    return CodecServer(url=f"http://127.0.0.1:{bound}", token=token, _loop=loop,
                       _runner=runner, _thread=thread)


def start_dev_codec_server(env: Mapping[str, str], state_dir: Path, ui_port: int,
                           tenants: Iterable[str] = ()) -> CodecServer:
    """The dev stack's codec server: the stack's key ring (made with a random shared key and
    one per tenant of ``tenants`` unless one is configured), a fresh token written to
    ``<state_dir>/codec-token`` (0600) for the CLI, and CORS for the dev server's UI."""
    codec = CodecSettings.from_env(env)
    if not codec.keys:
        ensure_keys_file(codec.keys_path, tenants)
    server = start_codec_server(load_key_ring(codec), origins=[
        f"http://{host}:{ui_port}" for host in ("127.0.0.1", "localhost")])
    token_file = state_dir / "codec-token"
    write_private(token_file, server.token + "\n")
    return server


def main(env: Mapping[str, str] | None = None) -> None:
    """``python -m tollgate.codec.server``: the codec server as a deployment runs it.

    Reads the key ring as every client does, the token from ``TOLLGATE_CODEC_TOKEN`` (required:
    a deployment shares it with the Web UI), the UI origins allowed by CORS from
    ``TOLLGATE_CODEC_ORIGINS`` (comma-separated), and listens on ``TOLLGATE_CODEC_HOST``
    (default 127.0.0.1; 0.0.0.0 in a container) and ``TOLLGATE_CODEC_PORT`` (default 8081).
    """
    from tollgate.observability.logs import configure_logging

    # As every other process: aiohttp's own lines (a request it could not handle) leave as
    # redacted JSON, not as the standard library's bare text (docs/deploy.md, "What a
    # deployment starts").
    configure_logging()
    codec = CodecSettings.from_env(process_env() if env is None else env)
    token = codec.token.get_secret_value() if codec.token else ""
    if len(token) < 16:
        raise SystemExit("TOLLGATE_CODEC_TOKEN must be set to a random string of 16+ characters")
    app = build_app(load_key_ring(codec), token, list(codec.origins))
    try:
        # Said once it listens, as a JSON line like the rest: where, never the token.
        web.run_app(app, host=codec.host, port=codec.port, access_log=None,
                    print=lambda _: structlog.get_logger("tollgate.codec").info(
                        "codec_server_listening", host=codec.host, port=codec.port))
    except OSError as exc:  # the port taken, the host not this machine's: one line, as dev says
        why = os.strerror(exc.errno).lower() if exc.errno else type(exc).__name__
        raise SystemExit(f"the codec server cannot listen on {codec.host}:{codec.port} ({why}); "
                         "set TOLLGATE_CODEC_HOST or TOLLGATE_CODEC_PORT") from None


if __name__ == "__main__":
    main()

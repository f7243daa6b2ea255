"""The loopback HTTP runner under every stand-in: JSON request/response types, a threading
server that can cut its open connections, and ``StandInServer``, which keeps its port across
``down()``/``up()``.

The stand-ins speak real HTTP so the adapters are exercised through httpx's real transport
(connection refused, read timeouts, dropped connections) instead of mocks. They bind to IPv4
loopback only: they have no authentication and expose fault-injection endpoints.
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import json
import socket
import socketserver
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qsl, unquote, urlsplit

import structlog

log = structlog.get_logger(__name__)


class PortInUseError(OSError):
    """The requested port already has a listener (another stand-in, another process)."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"cannot listen on {host}:{port}: port {port} is in use")
        self.host = host
        self.port = port


class HttpError(Exception):
    """Raised by an app to answer ``status`` with ``{"error": error, "detail": detail}``."""

    def __init__(self, status: int, error: str, detail: str | None = None) -> None:
        super().__init__(error)
        self.status, self.error, self.detail = status, error, detail


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def segments(self) -> list[str]:
        # Split before unquoting so an encoded "/" inside a key stays part of that segment.
        return [unquote(s) for s in self.path.strip("/").split("/") if s]

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            raise HttpError(400, "bad_json") from None


@dataclass(frozen=True)
class Response:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # sent verbatim instead of JSON (malformed-body faults)
    drop: bool = False  # close the connection without answering (a crash mid-request)


class JsonApp(Protocol):
    def handle(self, request: Request) -> Response: ...


class JsonHandler(BaseHTTPRequestHandler):
    # Keep-alive like a real service; that is why ``down()`` must also cut idle connections.
    protocol_version = "HTTP/1.1"
    timeout = 60  # idle keep-alive connections do not hold a thread forever
    disable_nagle_algorithm = True  # headers and body go out in two writes; no 40 ms stalls
    server: _HttpServer

    def do_GET(self) -> None:
        self._dispatch()

    do_POST = do_PUT = do_DELETE = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        # The stdlib prints every request line to stderr; URLs carry keys, so stay quiet.
        return

    def _dispatch(self) -> None:
        try:
            length = self.headers.get("Content-Length") or "0"
            if self.headers.get("Transfer-Encoding") or not length.isdigit():
                self.close_connection = True  # the body's end is unknown: cannot keep alive
                raise HttpError(411, "length_required")
            body = self.rfile.read(int(length))
            url = urlsplit(self.path)
            request = Request(
                method=self.command,
                path=url.path,
                query=dict(parse_qsl(url.query)),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
            )
            response = self.server.app.handle(request)
        except HttpError as exc:
            detail = {"detail": exc.detail} if exc.detail else {}
            response = Response(exc.status, {"error": exc.error, **detail})
        except Exception:
            log.exception("standin_handler_failed", method=self.command)  # URL holds keys
            response = Response(500, {"error": "internal"})
        self._send(response)

    def _send(self, response: Response) -> None:
        if response.drop:
            self.close_connection = True
            return
        data = response.raw if response.raw is not None else json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class _HttpServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler hanging on purpose must not block down()/stop()
    request_queue_size = 128  # the default 5 drops SYNs when 50 clients connect at once

    def __init__(self, address: tuple[str, int], app: JsonApp) -> None:
        self.app = app
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, JsonHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn); skip it, start must be fast.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def cut_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for conn in connections:
            with contextlib.suppress(OSError):  # already closed by the client
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out, or a connection cut by down(), is expected; the rest is a bug.
        if not isinstance(sys.exc_info()[1], OSError):
            log.exception("standin_connection_failed")


def require_loopback(host: str) -> None:
    try:
        loopback = ipaddress.IPv4Address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"stand-ins listen on IPv4 loopback only, not {host!r}")


class StandInServer:
    """Runs ``app`` on ``host:port`` in a background thread; ``down()``/``up()`` keep the port."""

    def __init__(self, app: JsonApp, *, host: str = "127.0.0.1", port: int = 0) -> None:
        require_loopback(host)
        self._app, self.host, self._port = app, host, port
        self._server: _HttpServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        """The bound port (fixed at the first ``up()``, so it survives ``down()``)."""
        return self._port

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self._port}"

    @property
    def is_up(self) -> bool:
        return self._server is not None

    def up(self) -> None:
        with self._lock:
            if self._server is not None:
                return
            try:
                server = _HttpServer((self.host, self._port), self._app)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise PortInUseError(self.host, self._port) from None
                raise
            self._port = server.server_address[1]
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"standin-{self._port}",
                daemon=True,
            )
            thread.start()
            self._server, self._thread = server, thread

    start = up

    def down(self) -> None:
        """Close the listener and every open connection: clients now get connection refused."""
        with self._lock:
            server, thread = self._server, self._thread
            self._server = self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        server.cut_connections()
        if thread is not None:
            thread.join(timeout=5)

    stop = down

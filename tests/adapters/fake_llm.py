"""A loopback HTTP server that speaks the OpenAI and Anthropic wire formats from a script.

Real SDK clients point their ``base_url`` at it, so the provider code under test is the code that
runs in production, HTTP and all. Stdlib only; binds 127.0.0.1 on port 0.

    with FakeLLM() as llm:
        llm.script(CHAT, Reply(body=openai_chat('{"message": "Hi"}')))
        provider = OpenAIDraftProvider(api_key="k", model="m", base_url=llm.openai_base_url)
        ...
        assert len(llm.requests) == 1

Each route answers from its own FIFO of ``Reply`` objects; an unscripted call gets a 599 so a
test that makes an unexpected request fails loudly instead of hanging.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contracts import DraftRequest, EventRef
from policies.prompts import PROMPT_VERSION

CHAT = "/v1/chat/completions"
MESSAGES = "/v1/messages"


@dataclass
class Reply:
    """One scripted answer. ``body`` is JSON-encoded unless it is already ``str``/``bytes``;
    ``delay`` holds the answer back (longer than the client's timeout = a hang)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any


class FakeLLM:
    def __init__(self) -> None:
        self._queues: dict[str, deque[Reply]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[Recorded] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, path: str, *replies: Reply) -> None:
        with self._lock:
            self._queues.setdefault(path, deque()).extend(replies)

    def _next(self, path: str) -> Reply:
        with self._lock:
            queue = self._queues.get(path)
            if queue:
                return queue.popleft()
        return Reply(status=599, body={"error": {"message": f"nothing scripted for {path}"}})

    def __enter__(self) -> FakeLLM:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()  # releases handlers still "hanging"
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _handler_for(llm: FakeLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            data = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(data) if data else None
            except ValueError:
                body = data.decode(errors="replace")
            path = self.path.split("?")[0]
            headers = {k.lower(): v for k, v in self.headers.items()}
            llm.requests.append(Recorded("POST", path, headers, body))
            reply = llm._next(path)
            if reply.delay and llm._stopping.wait(reply.delay):
                return
            payload = reply.body
            if isinstance(payload, str):
                payload = payload.encode()
            elif not isinstance(payload, bytes):
                payload = json.dumps(payload).encode()
            try:
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (timeout tests)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

    return Handler


# --- recorded response bodies ------------------------------------------------------------------


def openai_chat(
    content: str | None = None,
    *,
    refusal: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    model: str = "gpt-test-2026",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1767225600,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160},
    }


def openai_tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def openai_error(status: int, message: str = "error", kind: str = "api_error") -> Reply:
    return Reply(status=status, body={"error": {"message": message, "type": kind, "code": None}})


def anthropic_message(
    text: str | None = None,
    *,
    tool_use: dict[str, Any] | None = None,
    stop_reason: str = "end_turn",
    model: str = "claude-test-2026",
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "text", "text": text})
    if tool_use is not None:
        content.append({"type": "tool_use", "id": "toolu_1", **tool_use})
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 120, "output_tokens": 40},
    }


def anthropic_error(status: int, kind: str = "api_error", message: str = "error") -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Reply(status=status, body=body)


# --- a request to draft for ----------------------------------------------------------------------

CARE_CONTEXT = {
    "crm.first_name": "Lan",
    "crm.pet_name": "Miu",
    "crm.locale": "en",
    "event.reminder_kind": "vaccination",
    "event.due_at": "2026-12-01T09:00:00+00:00",
}


def care_due_request(context: dict[str, str] | None = None, **changes: Any) -> DraftRequest:
    """A CARE_DUE draft request like the ones step 3 produces."""
    ref = EventRef(
        workflow_id="event/clinic-1/care-42",
        tenant_id="clinic-1",
        event_id="evt-42",
        event_type="CARE_DUE",
        entity_id="cust-7",
        correlation_id="corr-42",
        schema_version=3,
    )
    fields: dict[str, Any] = {
        "ref": ref,
        "context": CARE_CONTEXT if context is None else context,
        "policy_version": "policy-v1",
        "prompt_version": PROMPT_VERSION,
    }
    return DraftRequest(**{**fields, **changes})

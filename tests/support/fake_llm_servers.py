"""Loopback HTTP servers that speak just enough of the OpenAI and Anthropic wire protocols.

Each server runs the stdlib ``http.server`` on 127.0.0.1 with a random port in a daemon thread,
records every request it receives and answers with scripted replies, so the real SDKs can be
exercised end to end without any network.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import attrs

# Endpoint each provider's SDK posts to (the OpenAI SDK's base_url carries the /v1 prefix).
PATHS = {"openai": "/v1/chat/completions", "anthropic": "/v1/messages",
         "responses": "/v1/responses"}  # OpenAI's Responses API
#: How long a gated reply waits for its gate: only a hang guard, never a timing assumption.
GATE_GUARD = 60.0


@attrs.frozen(kw_only=True)
class Reply:
    """One scripted answer: status, raw body, headers, and an optional delay before answering.

    ``hang_up`` closes the connection without answering (a reset as the client sees it).
    ``gate`` holds the answer until the test sets the event: a test that needs a request to be
    "still in flight" says so with an event instead of guessing a delay long enough under load.
    A gate never set answers ``GATE_GUARD`` seconds later with a loud 599, so a test that forgets
    to open it fails instead of hanging.
    """

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = attrs.field(factory=lambda: {"Content-Type": "application/json"})
    delay: float = 0.0
    hang_up: bool = False
    gate: threading.Event | None = attrs.field(default=None, eq=False)


@attrs.frozen(kw_only=True)
class Received:
    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes
    peer: tuple[str, int]  # the client's address: the same one means a reused connection

    def json(self) -> Any:
        return json.loads(self.body)

    def credentials(self) -> str:
        """Whatever the SDK sent as its key (the header differs between SDKs and versions)."""
        return self.headers.get("x-api-key", "") + " " + self.headers.get("authorization", "")


def json_reply(status: int, payload: Any, **kwargs: Any) -> Reply:
    return Reply(status=status, body=json.dumps(payload).encode(), **kwargs)


# --- OpenAI chat-completions shapes -------------------------------------------------------------


def openai_completion(content: str | None, *, model: str = "fake-model", **kwargs: Any) -> Reply:
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    return json_reply(200, payload, **kwargs)


def openai_error(status: int, message: str, *, type: str = "invalid_request_error",
                 code: str | None = None, **kwargs: Any) -> Reply:
    return json_reply(
        status, {"error": {"message": message, "type": type, "param": None, "code": code}}, **kwargs
    )


# --- OpenAI Responses shapes --------------------------------------------------------------------


def responses_reply(output: list[dict[str, Any]], *, model: str = "fake-model",
                    input_tokens: int = 10, **kwargs: Any) -> Reply:
    """A ``Response`` whose ``output`` is the given items (messages, reasoning, calls ...)."""
    payload = {
        "id": "resp_fake", "object": "response", "created_at": 1_700_000_000,
        "status": "completed", "model": model, "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {"input_tokens": input_tokens, "output_tokens": 5,
                  "total_tokens": input_tokens + 5,
                  "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens_details": {"reasoning_tokens": 0}},
    }
    return json_reply(200, payload, **kwargs)


# --- Anthropic Messages shapes -------------------------------------------------------------------


def anthropic_message(texts: list[str] | str, *, model: str = "fake-claude",
                      extra_blocks: list[dict[str, Any]] | None = None, **kwargs: Any) -> Reply:
    blocks: list[dict[str, Any]] = list(extra_blocks or [])
    for text in [texts] if isinstance(texts, str) else texts:
        blocks.append({"type": "text", "text": text})
    payload = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return json_reply(200, payload, **kwargs)


def anthropic_error(status: int, type: str, message: str, **kwargs: Any) -> Reply:
    return json_reply(
        status, {"type": "error", "error": {"type": type, "message": message}}, **kwargs
    )


# --- the server ----------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        fake = self.server.fake
        fake._record(Received(
            method="POST", path=self.path, headers={k.lower(): v for k, v in self.headers.items()},
            body=body, peer=(str(self.client_address[0]), int(self.client_address[1])),
        ))
        if self.path.split("?", 1)[0] != PATHS[fake.provider]:
            reply = (openai_error(404, f"no route {self.path}") if fake.provider != "anthropic"
                     else anthropic_error(404, "not_found_error", f"no route {self.path}"))
        else:
            reply = fake._next_reply()
        if reply.delay and fake._stopping.wait(reply.delay):
            return
        if reply.gate is not None and not _wait_for_gate(reply.gate, fake._stopping):
            if fake._stopping.is_set():
                return
            reply = json_reply(599, {"error": {"message": "fake server: the test never opened the gate"}})
        if reply.hang_up:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
        except OSError:  # the client gave up (timeout) before we answered
            self.close_connection = True


def _wait_for_gate(gate: threading.Event, stopping: threading.Event) -> bool:
    deadline = time.monotonic() + GATE_GUARD
    while not gate.wait(0.05):
        if stopping.is_set() or time.monotonic() > deadline:
            return False
    return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # many clients at once (concurrent sessions) are not refused
    fake: FakeLLMServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is expected here, not a test failure


class FakeLLMServer:
    """A scripted provider endpoint. Queue replies with ``push``; the last one repeats."""

    def __init__(self, provider: str) -> None:
        if provider not in PATHS:
            raise ValueError(f"unknown provider {provider!r}")
        self.provider = provider
        self.requests: list[Received] = []
        self._replies: deque[Reply] = deque()
        self._last: Reply | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """What to configure as ``compression.summary.base_url`` for this provider's SDK."""
        root = f"http://127.0.0.1:{self.port}"
        return root + "/v1" if self.provider != "anthropic" else root

    def push(self, *replies: Reply) -> FakeLLMServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    def start(self) -> FakeLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)

    def _next_reply(self) -> Reply:
        with self._lock:
            if self._replies:
                self._last = self._replies.popleft()
            if self._last is None:  # answer loudly rather than hang the client
                return json_reply(599, {"error": {"message": "fake server: no reply scripted"}})
            return self._last


@contextmanager
def running(provider: str) -> Iterator[FakeLLMServer]:
    server = FakeLLMServer(provider).start()
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for as long as the block runs.

    The port stays bound (never listening) by this socket, so no other process - another test
    run's server on a busy machine - can start listening there in the meantime: a port that
    was merely free a moment ago is not a "nothing listens there" guarantee.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])

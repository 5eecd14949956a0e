"""``compression.summary.timeout`` is a deadline for the whole summariser call.

A loopback server answers one byte a second - the status line and headers, or only the body -
which never trips a per-read socket timeout. The call must end with a timeout failure within
the configured timeout plus a small margin, for both SDK-based summarisers and through the CLI.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.summarizer import SummarizerTimeoutError, SummaryRequest

TIMEOUT = 1.0
MARGIN = 1.0
#: The server gives up trickling after this long, so a broken deadline fails instead of hanging.
SERVER_GIVES_UP = 8.0

pytest.importorskip("openai")
pytest.importorskip("anthropic")


class TricklingServer:
    """Reads one HTTP request per connection, then answers ``trickle`` seconds per byte."""

    def __init__(self, *, body_only: bool, trickle: float = 1.0) -> None:
        self.body_only = body_only
        self.trickle = trickle
        self.stopping = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.1)
        self.requests = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        self.requests += 1
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
            except OSError:
                return
            body = json.dumps({"id": "x", "choices": [], "content": [], "pad": "z" * 200}).encode()
            head = (
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            started = time.monotonic()
            try:
                if self.body_only:
                    conn.sendall(head)
                    payload = body
                else:
                    payload = head + body
                for i in range(len(payload)):
                    if self.stopping.wait(self.trickle) or time.monotonic() - started > SERVER_GIVES_UP:
                        return
                    conn.sendall(payload[i : i + 1])
            except OSError:
                return

    def __enter__(self) -> TricklingServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.listener.close()


@pytest.fixture(autouse=True)
def _keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-123")


def _summarizer(provider: str, base_url: str) -> Any:
    from hermes_plugins.summarizers import AnthropicSummarizer, OpenAISummarizer

    config = load_config(data={"compression": {"summary": {
        "provider": provider, "base_url": base_url, "model": "m", "timeout": TIMEOUT,
    }}}, env={})
    factory = OpenAISummarizer if provider == "openai" else AnthropicSummarizer
    return factory(config)


@pytest.fixture(params=[False, True], ids=["whole-response-trickles", "body-trickles"])
def trickling(request: pytest.FixtureRequest) -> Iterator[TricklingServer]:
    with TricklingServer(body_only=request.param) as server:
        yield server


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_trickling_server_times_out_within_the_deadline(trickling: TricklingServer, provider: str) -> None:
    base = trickling.url + ("/v1" if provider == "openai" else "")
    summarizer = _summarizer(provider, base)
    started = time.monotonic()
    with pytest.raises(SummarizerTimeoutError) as caught:
        summarizer.summarize(SummaryRequest(prompt="summarise this"))
    elapsed = time.monotonic() - started
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + MARGIN
    assert caught.value.kind == "timeout"
    assert f"{TIMEOUT:g} s" in str(caught.value)


def test_the_next_call_after_a_deadline_uses_a_fresh_client() -> None:
    with TricklingServer(body_only=True) as server:
        summarizer = _summarizer("openai", server.url + "/v1")
        for _ in range(2):
            started = time.monotonic()
            with pytest.raises(SummarizerTimeoutError):
                summarizer.summarize(SummaryRequest(prompt="again"))
            assert time.monotonic() - started < TIMEOUT + MARGIN
        assert server.requests == 2


def test_the_cli_compression_is_not_held_by_a_trickling_summariser(tmp_path: Path) -> None:
    with TricklingServer(body_only=False) as server:
        home = tmp_path / "home"
        home.mkdir()
        (home / "config.yaml").write_text(
            "compression:\n  summary:\n    provider: openai\n    model: m\n"
            f"    base_url: {server.url}/v1\n    timeout: {TIMEOUT}\n",
            encoding="utf-8",
        )
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(40):
            messages.append({"role": "user", "content": f"question {i} " + "words " * 400})
            messages.append({"role": "assistant", "content": f"answer {i} " + "more " * 400})
        transcript = tmp_path / "t.json"
        transcript.write_text(json.dumps(messages), encoding="utf-8")
        started = time.monotonic()
        result = CliRunner().invoke(
            cli, ["--home", str(home), "compress", str(transcript), "--context-length", "8000",
                  "--json"],
        )
        elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert server.requests >= 1  # the summariser was asked
    # At most max_attempts rounds, each bounded by the deadline (plus the free passes).
    attempts = load_config(env={}).compression.max_attempts
    assert elapsed < attempts * (TIMEOUT + MARGIN)

"""Compression in the request loop, driven through the Session API with a fake model."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from hermes_core import ContextOverflowError, Session, hookimpl
from hermes_core.compaction_feedback import CompactionEvent, summarize_manual
from hermes_core.overflow import classify_overflow, reported_limit
from hermes_core.tokens import estimate_request_tokens


class ProviderError(Exception):
    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class FakeModel:
    """A provider: counts the request like the rough estimate scaled by ``ratio``; refuses
    requests over ``window``; answers every user/tool turn with one tool call or a reply."""

    def __init__(self, session: Session, *, window: int, ratio: float = 1.0, completion: int = 50) -> None:
        self.session = session
        self.window = window
        self.ratio = ratio
        self.completion = completion
        self.requests: list[int] = []

    def call(self, messages: list[dict[str, Any]], tools: Any = None) -> dict[str, int]:
        tokens = int(estimate_request_tokens(messages, system_prompt=self.session.system_prompt, tools=tools) * self.ratio)
        self.requests.append(tokens)
        if tokens > self.window:
            raise ProviderError(
                f"This model's maximum context length is {self.window} tokens. However, your messages resulted in {tokens} tokens.",
                status_code=400,
            )
        return {"prompt_tokens": tokens, "completion_tokens": self.completion, "total_tokens": tokens + self.completion}


def tool_turn(i: int, size: int) -> list[dict[str, Any]]:
    call_id = f"call_{i}"
    return [
        {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/mod_{i}.py"})}}]},
        {"role": "tool", "tool_call_id": call_id, "content": f"# module {i}\n" + ("value = compute(x)\n" * (size // 19))},
    ]


def pairs_intact(messages: list[dict[str, Any]]) -> bool:
    calls = {c["id"] for m in messages for c in (m.get("tool_calls") or ())}
    results = [m["tool_call_id"] for m in messages if m.get("role") == "tool"]
    return set(results) == calls and len(results) == len(set(results))


@pytest.fixture
def open_session(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()

    def make(config_text: str = "", **kwargs: Any) -> Session:
        if config_text:
            (home / "config.yaml").write_text(config_text)
        events: list[CompactionEvent] = []
        kwargs.setdefault("context_length", 200_000)
        session = Session.open(
            cwd=tmp_path, home=home, model="test-model", provider="openai", platform="cli",
            tools=["read_file"], on_status=events.append, **kwargs,
        )
        session.test_events = events  # type: ignore[attr-defined]
        return session

    return make


def test_threshold_crossed_inside_a_tool_loop(open_session) -> None:
    session = open_session()
    model = FakeModel(session, window=110_000)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Refactor every module under src/ and keep the tests green."}]
    compacted_at = []
    for i in range(60):
        messages = session.before_request(messages)
        usage = model.call(messages)  # never raises: compression comes before the overflow
        messages = session.after_response(usage, messages + tool_turn(i, 12_000))
        if session.engine.compression_count and not compacted_at:
            compacted_at.append(i)
        assert pairs_intact(messages)
    assert compacted_at, "the loop never compressed"
    assert max(model.requests) <= model.window
    assert messages[-1]["role"] == "tool" and messages[-1]["tool_call_id"] == "call_59"
    assert any(m.get("content", "").startswith("Refactor every module") for m in messages if m.get("role") == "user") or any(
        "Refactor every module" in str(m.get("content")) for m in messages
    )
    kinds = [e.kind for e in session.test_events]
    assert "compacted" in kinds
    event = next(e for e in session.test_events if e.kind == "compacted")
    assert event.before_tokens > event.after_tokens and "context compacted" in event.message


def test_provider_counting_far_below_the_estimate_never_compresses(open_session) -> None:
    session = open_session()
    model = FakeModel(session, window=200_000, ratio=0.5)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "analyse the logs"}]
    for i in range(40):  # rough estimate climbs to ~130k; the provider says ~65k
        messages = session.before_request(messages)
        messages = session.after_response(model.call(messages), messages + tool_turn(i, 13_000))
    assert estimate_request_tokens(messages, system_prompt=session.system_prompt) > session.engine.threshold_tokens
    assert session.engine.compression_count == 0
    assert not [e for e in session.test_events if e.kind in {"compacted", "fallback"}]


def test_reasoning_tokens_never_trigger_compression(open_session) -> None:
    session = open_session()
    messages = [{"role": "user", "content": "think hard"}]
    out = session.after_response({"prompt_tokens": 5_000, "completion_tokens": 900_000, "total_tokens": 905_000}, messages)
    assert out is messages
    assert session.engine.compression_count == 0


def test_overflow_error_then_successful_retry(open_session) -> None:
    session = open_session(context_length=1_000_000)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "index the repository"}]
    for i in range(40):
        messages += tool_turn(i, 12_000)
    messages.append({"role": "user", "content": "now summarise what you found"})
    model = FakeModel(session, window=100_000)
    with pytest.raises(ProviderError) as info:
        model.call(messages)
    retry = session.on_provider_error(info.value, messages)
    assert retry is not None and len(retry) < len(messages)
    assert session.engine.context_length == 100_000  # learned from the error text
    usage = model.call(retry)  # the retry fits
    assert usage["prompt_tokens"] <= 100_000
    assert retry[-1]["content"] == "now summarise what you found"
    assert pairs_intact(retry)


def test_non_overflow_errors_are_not_handled(open_session) -> None:
    session = open_session()
    assert session.on_provider_error(ProviderError("invalid api key", status_code=401), [{"role": "user", "content": "x"}]) is None


def test_compression_disabled_never_compresses_and_says_what_to_do(open_session) -> None:
    session = open_session("compression:\n  enabled: false\n")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(40):
        messages += tool_turn(i, 12_000)
    assert session.before_request(messages) is messages
    assert session.after_response({"prompt_tokens": 190_000}, messages) is messages
    with pytest.raises(ContextOverflowError) as info:
        session.on_provider_error(ProviderError("prompt is too long: 210000 tokens > 200000 maximum", 400), messages)
    text = str(info.value)
    assert "/compress" in text and "compression.enabled" in text and "new session" in text and "larger window" in text


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_summariser_down_loses_nothing_and_tells_the_user(open_session) -> None:
    pytest.importorskip("openai")
    port = _closed_port()
    session = open_session(
        "compression:\n  summary:\n    provider: openai\n    model: summary-model\n"
        f"    base_url: http://127.0.0.1:{port}/v1\n    timeout: 2\n"
    )
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(40):
        messages += tool_turn(i, 12_000)
    messages.append({"role": "user", "content": "continue"})
    before = json.dumps(messages)
    out = session.before_request(messages)
    assert json.dumps(out) == before  # nothing dropped
    aborted = [e for e in session.test_events if e.kind == "aborted"]
    assert aborted and "no messages were removed" in aborted[0].message
    result = session.compress(messages)
    assert result.feedback.aborted and result.feedback.headline.startswith("Compression aborted")
    assert "Reason:" in (result.feedback.note or "")


def test_manual_compress_nothing_to_compress_makes_no_engine_call(open_session) -> None:
    session = open_session()
    calls: list[int] = []

    class Spy:
        @hookimpl(wrapper=True)
        def hermes_engine_compress(self, engine: Any, messages: Any, current_tokens: Any, focus_topic: Any, force: Any) -> Any:
            calls.append(1)
            return (yield)

    session.host.register(Spy(), "spy")
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    result = session.compress(messages)
    assert result.messages is messages and calls == []
    assert result.feedback.noop and "Nothing to compress" in result.feedback.headline


def test_manual_compress_rebuilds_the_prompt_once_and_keeps_the_session_id(open_session) -> None:
    session = open_session()
    memories = session.home / "memories"
    memories.mkdir(exist_ok=True)
    session_id = session.session_id
    first = session.system_prompt
    (memories / "MEMORY.md").write_text("The user deploys with `make ship`.")
    assert session.system_prompt == first  # frozen until a compression
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for i in range(30):
        messages += tool_turn(i, 8_000)
    messages.append({"role": "user", "content": "keep going"})
    result = session.compress(messages, focus_topic="the deploy")
    assert len(result.messages) < len(messages)
    assert result.feedback.headline.startswith("Compressed: ")
    assert "→" in result.feedback.token_line
    rebuilt = session.system_prompt
    assert rebuilt != first and "make ship" in rebuilt
    assert session.system_prompt is rebuilt  # stable again
    assert session.session_id == session_id


def test_blocked_compression_is_reported_with_its_reason(open_session) -> None:
    session = open_session()

    class Veto:
        @hookimpl(tryfirst=True)
        def hermes_engine_should_compress(self, engine: Any, prompt_tokens: Any) -> Any:
            return (False, "cooldown:60")

    session.host.register(Veto(), "veto")
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(40):
        messages += tool_turn(i, 12_000)
    assert session.before_request(messages) is messages
    blocked = [e for e in session.test_events if e.kind == "blocked"]
    assert blocked and blocked[0].reason == "cooldown:60" and "cooldown:60" in blocked[0].message


def test_honest_note_when_messages_fell_but_tokens_rose() -> None:
    feedback = summarize_manual(list(range(12)), list(range(4)), 1_000, 1_400, {"status": "compressed"})
    assert feedback.headline == "Compressed: 12 → 4 messages"
    assert "estimate rose" in (feedback.note or "")
    fallback = summarize_manual(list(range(12)), list(range(4)), 120_000, 30_000, {"fallback_used": True, "dropped_count": 8, "error": "timeout: read timed out"})
    assert fallback.headline == "Compressed with fallback: 12 → 4 messages"
    assert "removed 8 message(s)" in fallback.note and "Reason: timeout" in fallback.note
    aborted = summarize_manual(list(range(12)), list(range(12)), 120_000, 120_000, {"aborted": True, "error": "auth: no API key was found"})
    assert aborted.headline == "Compression aborted: 12 messages preserved"
    assert "no messages were removed" in aborted.note and "no API key" in aborted.note


@pytest.mark.parametrize(
    "error,expected",
    [
        (ProviderError("Request Entity Too Large", 413), "payload_too_large"),
        (ProviderError("This model's maximum context length is 128000 tokens", 400), "context_overflow"),
        (ProviderError("prompt is too long: 210000 tokens > 200000 maximum", 400), "context_overflow"),
        (ProviderError("context_length_exceeded", 400), "context_overflow"),
        (ProviderError("Extra usage is required for long context requests.", 429), "long_context_tier"),
        (ProviderError("Rate limit reached", 429), None),
        (ProviderError("max_tokens is too large: 200000. This model supports at most 8192 completion tokens", 400), None),
        (ProviderError("invalid api key", 401), None),
    ],
)
def test_overflow_classification(error: ProviderError, expected: str | None) -> None:
    assert classify_overflow(error) == expected


def test_reported_limit_is_parsed() -> None:
    assert reported_limit("This model's maximum context length is 262,144 tokens.") == 262_144
    assert reported_limit("no numbers here") is None

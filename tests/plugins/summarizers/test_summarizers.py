"""The openai and anthropic summarisers against loopback servers speaking each wire protocol."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest

from hermes_core import load_config
from hermes_core.summarizer import (
    Summarizer,
    SummarizerAuthError,
    SummarizerEmptyError,
    SummarizerError,
    SummarizerModelNotFoundError,
    SummarizerNetworkError,
    SummarizerTimeoutError,
    SummaryRequest,
)
from hermes_plugins.summarizers import AnthropicSummarizer, OpenAISummarizer

from fake_llm_servers import (
    GATE_GUARD,
    FakeLLMServer,
    Reply,
    anthropic_error,
    anthropic_message,
    openai_completion,
    openai_error,
    refused_port,
    running,
)

pytest.importorskip("openai")
pytest.importorskip("anthropic")

PROMPT = "Summarise these turns:\n[USER]: fix the login bug\n[ASSISTANT]: patched auth.py"
FAST_TIMEOUT = 0.3


@attrs.frozen(kw_only=True)
class Protocol:
    """How one provider's fake server is scripted, and how the summariser is built for it."""

    provider: str
    factory: Callable[..., Summarizer]
    key_env: str
    success: Callable[[str], Reply]
    error: Callable[[int, str], Reply]
    empty_replies: tuple[Reply, ...]


OPENAI = Protocol(
    provider="openai",
    factory=OpenAISummarizer,
    key_env="OPENAI_API_KEY",
    success=lambda text: openai_completion(text),
    error=lambda status, message: openai_error(status, message, type="error"),
    empty_replies=(
        openai_completion(""),
        openai_completion("  \n\t "),
        openai_completion(None),
        openai_completion("<think>only reasoning, no answer</think>\n"),
        Reply(body=b'{"id": "x", "object": "chat.completion", "choices": []}'),
        Reply(body=b"{}"),
    ),
)

ANTHROPIC = Protocol(
    provider="anthropic",
    factory=AnthropicSummarizer,
    key_env="ANTHROPIC_API_KEY",
    success=lambda text: anthropic_message(text),
    error=lambda status, message: anthropic_error(status, "api_error", message),
    empty_replies=(
        anthropic_message([]),
        anthropic_message("   \n"),
        anthropic_message([], extra_blocks=[
            {"type": "thinking", "thinking": "hmm", "signature": "sig"}
        ]),
        Reply(body=b"{}"),
    ),
)

PROTOCOLS = [pytest.param(OPENAI, id="openai"), pytest.param(ANTHROPIC, id="anthropic")]


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs read base URLs, keys and proxies from the environment; tests set their own."""
    for var in (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
        "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "MY_SUMMARY_KEY",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    ):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(params=PROTOCOLS)
def protocol(request: pytest.FixtureRequest) -> Protocol:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
def server(protocol: Protocol) -> Iterator[FakeLLMServer]:
    with running(protocol.provider) as fake:
        yield fake


def summarizer_for(protocol: Protocol, base_url: str | None, *, model: str | None = None,
                   timeout: float = 5.0, **summary: Any) -> Summarizer:
    config = load_config(data={"compression": {"summary": {
        "provider": protocol.provider, "base_url": base_url, "model": "summary-model",
        "timeout": timeout, **summary,
    }}}, env={})
    return protocol.factory(config, model=model)


def request(**kwargs: Any) -> SummaryRequest:
    return SummaryRequest(prompt=PROMPT, **kwargs)


@pytest.fixture
def keyed(monkeypatch: pytest.MonkeyPatch, protocol: Protocol) -> str:
    monkeypatch.setenv(protocol.key_env, "sk-test-key-123")
    return "sk-test-key-123"


# --- success -------------------------------------------------------------------------------------


def test_success_sends_the_prompt_as_one_user_message(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(protocol.success("## Goal\nFix the login bug."))
    summarizer = summarizer_for(protocol, server.base_url)

    assert summarizer.name == protocol.provider
    assert isinstance(summarizer, Summarizer)
    assert summarizer.summarize(request(budget_tokens=3_000)) == "## Goal\nFix the login bug."

    [received] = server.requests
    body = received.json()
    assert body["model"] == "summary-model"
    assert body["messages"] == [{"role": "user", "content": PROMPT}]
    assert keyed in received.credentials()
    if protocol.provider == "anthropic":
        assert received.path == "/v1/messages"
        assert body["max_tokens"] == 6_000
    else:
        assert received.path == "/v1/chat/completions"
        assert "max_tokens" not in body


def test_one_client_serves_every_call(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(protocol.success("first"), protocol.success("second"))
    summarizer = summarizer_for(protocol, server.base_url)
    assert summarizer.summarize(request()) == "first"
    assert summarizer.summarize(request()) == "second"
    first, second = server.requests
    assert first.peer == second.peer  # the kept-alive connection of a single client


def test_model_argument_wins_over_config_and_request_model_over_both(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(protocol.success("ok"))
    summarizer = summarizer_for(protocol, server.base_url, model="main-model")
    summarizer.summarize(request())
    summarizer.summarize(request(model="fallback-model"))
    assert [r.json()["model"] for r in server.requests] == ["main-model", "fallback-model"]


def test_reasoning_blocks_are_stripped_from_the_answer(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(protocol.success(
        "<think>Let me plan the sections.</think>\n## Goal\nShip it.\n"
        "<reasoning>double-check</reasoning>"
    ))
    assert summarizer_for(protocol, server.base_url).summarize(request()) == "## Goal\nShip it."


def test_anthropic_keeps_text_blocks_and_ignores_thinking_blocks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with running("anthropic") as server:
        server.push(anthropic_message(["## Goal\n", "Ship it."], extra_blocks=[
            {"type": "thinking", "thinking": "secret plan", "signature": "sig"}
        ]))
        text = summarizer_for(ANTHROPIC, server.base_url).summarize(request())
    assert text == "## Goal\nShip it."


def test_anthropic_max_tokens_has_a_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with running("anthropic") as server:
        server.push(anthropic_message("ok"))
        summarizer_for(ANTHROPIC, server.base_url).summarize(request(budget_tokens=100))
    assert server.requests[0].json()["max_tokens"] == 1_024


def test_openai_accepts_list_content_from_compatible_servers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with running("openai") as server:
        server.push(openai_completion([{"type": "text", "text": "part one, "},  # type: ignore[arg-type]
                                       {"type": "text", "text": "part two"}]))
        assert summarizer_for(OPENAI, server.base_url).summarize(request()) == "part one, part two"


# --- HTTP failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "message", "expected"),
    [
        (401, "invalid x-api-key", SummarizerAuthError),
        (402, "payment required", SummarizerAuthError),
        (403, "forbidden", SummarizerAuthError),
        (429, "rate limited, slow down", SummarizerTimeoutError),
        (408, "request timeout", SummarizerTimeoutError),
        (502, "bad gateway", SummarizerTimeoutError),
        (504, "gateway timeout", SummarizerTimeoutError),
        (404, "model: summary-model", SummarizerModelNotFoundError),
        (400, "The model `summary-model` does not exist", SummarizerModelNotFoundError),
    ],
)
def test_http_errors_map_to_their_failure_class(
    protocol: Protocol, server: FakeLLMServer, keyed: str,
    status: int, message: str, expected: type[SummarizerError],
) -> None:
    server.push(protocol.error(status, message))
    with pytest.raises(expected) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert caught.value.status == status
    assert f"HTTP {status}" in str(caught.value)
    # The SDK's own retries are off: the engine's cooldown policy decides what happens next.
    assert len(server.requests) == 1


def test_401_says_which_variable_holds_the_key(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(protocol.error(401, "invalid api key"))
    with pytest.raises(SummarizerAuthError, match=protocol.key_env) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert caught.value.kind == "auth"
    assert keyed not in str(caught.value)


def test_500_is_a_generic_failure(protocol: Protocol, server: FakeLLMServer, keyed: str) -> None:
    server.push(protocol.error(500, "internal failure"))
    with pytest.raises(SummarizerError) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert type(caught.value) is SummarizerError
    assert caught.value.kind == "other"
    assert caught.value.status == 500
    assert "internal failure" in str(caught.value)
    assert len(server.requests) == 1


def test_error_without_a_json_body_still_maps_by_status(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(Reply(status=502, body=b"<html>bad gateway</html>",
                      headers={"Content-Type": "text/html"}))
    with pytest.raises(SummarizerTimeoutError) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert caught.value.status == 502


def test_openai_insufficient_quota_429_is_an_access_failure_not_a_rate_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    with running("openai") as server:
        server.push(openai_error(
            429, "You exceeded your current quota, please check your plan and billing details.",
            type="insufficient_quota", code="insufficient_quota",
        ))
        with pytest.raises(SummarizerAuthError) as caught:
            summarizer_for(OPENAI, server.base_url).summarize(request())
    assert caught.value.status == 429


def test_anthropic_low_credit_400_is_an_access_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with running("anthropic") as server:
        server.push(anthropic_error(
            400, "invalid_request_error",
            "Your credit balance is too low to access the Anthropic API.",
        ))
        with pytest.raises(SummarizerAuthError) as caught:
            summarizer_for(ANTHROPIC, server.base_url).summarize(request())
    assert caught.value.status == 400


def test_anthropic_overloaded_529_is_a_generic_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with running("anthropic") as server:
        server.push(anthropic_error(529, "overloaded_error", "Overloaded"))
        with pytest.raises(SummarizerError) as caught:
            summarizer_for(ANTHROPIC, server.base_url).summarize(request())
    assert (caught.value.kind, caught.value.status) == ("other", 529)


# --- transport failures --------------------------------------------------------------------------


def test_timeout_when_the_server_answers_too_late(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    # The answer waits for a gate the test opens only afterwards: a summariser that ignored its
    # timeout would get the answer once the gate's guard expires (a 599), never a timeout, and
    # the SDK's retries (each with its own timeout) would show as more than one request.
    gate = threading.Event()
    server.push(attrs.evolve(protocol.success("too late"), gate=gate))
    summarizer = summarizer_for(protocol, server.base_url, timeout=FAST_TIMEOUT)
    started = time.perf_counter()
    try:
        with pytest.raises(SummarizerTimeoutError) as caught:
            summarizer.summarize(request())
    finally:
        gate.set()
    assert time.perf_counter() - started < GATE_GUARD / 2  # a hang guard, not a speed claim
    assert caught.value.status is None
    assert caught.value.kind == "timeout"
    assert len(server.requests) == 1


def test_connection_refused_is_a_network_failure(protocol: Protocol, keyed: str) -> None:
    with refused_port() as port, pytest.raises(SummarizerNetworkError) as caught:
        root = f"http://127.0.0.1:{port}"
        base_url = root + "/v1" if protocol.provider == "openai" else root
        summarizer_for(protocol, base_url, timeout=2.0).summarize(request())
    assert caught.value.kind == "network"
    assert "cannot reach" in str(caught.value)


def test_connection_reset_is_a_network_failure(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(Reply(hang_up=True))
    with pytest.raises(SummarizerNetworkError):
        summarizer_for(protocol, server.base_url).summarize(request())


def test_credentials_in_base_url_stay_out_of_the_error(protocol: Protocol, keyed: str) -> None:
    with refused_port() as port, pytest.raises(SummarizerNetworkError) as caught:
        base_url = f"http://user:hunter2secret@127.0.0.1:{port}/v1"
        summarizer_for(protocol, base_url, timeout=2.0).summarize(request())
    assert "hunter2secret" not in str(caught.value)
    assert f"127.0.0.1:{port}" in str(caught.value)


# --- empty answers -------------------------------------------------------------------------------


def test_empty_body_is_an_empty_failure(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(Reply(status=200, body=b""))
    with pytest.raises(SummarizerEmptyError) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert caught.value.kind == "empty"


def test_blank_content_is_an_empty_failure(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    summarizer = summarizer_for(protocol, server.base_url)
    for reply in protocol.empty_replies:
        server.push(reply)
        with pytest.raises(SummarizerEmptyError):
            summarizer.summarize(request())
    assert len(server.requests) == len(protocol.empty_replies)


def test_non_json_body_is_a_generic_failure(
    protocol: Protocol, server: FakeLLMServer, keyed: str
) -> None:
    server.push(Reply(status=200, body=b"<html>captive portal</html>"))
    with pytest.raises(SummarizerError) as caught:
        summarizer_for(protocol, server.base_url).summarize(request())
    assert caught.value.kind == "other"


# --- keys and models -----------------------------------------------------------------------------


def test_key_comes_from_the_configured_variable(
    protocol: Protocol, server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SUMMARY_KEY", "sk-from-custom-var")
    monkeypatch.setenv(protocol.key_env, "sk-default-var-not-used")
    server.push(protocol.success("ok"))
    summarizer_for(protocol, server.base_url, api_key_env="MY_SUMMARY_KEY").summarize(request())
    sent = server.requests[0].credentials()
    assert "sk-from-custom-var" in sent
    assert "sk-default-var-not-used" not in sent


def test_local_server_without_a_key_gets_a_placeholder(
    protocol: Protocol, server: FakeLLMServer
) -> None:
    server.push(protocol.success("ok"))
    assert summarizer_for(protocol, server.base_url).summarize(request()) == "ok"
    assert len(server.requests) == 1


def test_missing_key_for_the_providers_own_endpoint_is_an_auth_failure(protocol: Protocol) -> None:
    # No base_url means the provider's real endpoint: fail before any network traffic.
    with pytest.raises(SummarizerAuthError, match=protocol.key_env):
        summarizer_for(protocol, None).summarize(request())


def test_missing_key_in_an_explicitly_configured_variable_is_an_auth_failure(
    protocol: Protocol, server: FakeLLMServer
) -> None:
    with pytest.raises(SummarizerAuthError, match="MY_SUMMARY_KEY"):
        summarizer_for(protocol, server.base_url, api_key_env="MY_SUMMARY_KEY").summarize(request())
    assert server.requests == []


def test_no_model_anywhere_asks_for_the_main_model(protocol: Protocol, server: FakeLLMServer,
                                                    keyed: str) -> None:
    config = load_config(data={"compression": {"summary": {
        "provider": protocol.provider, "base_url": server.base_url,
    }}}, env={})
    with pytest.raises(SummarizerModelNotFoundError, match="compression.summary.model"):
        protocol.factory(config).summarize(request())
    assert server.requests == []


# --- the async client: the same answers and the same typed errors ---------------------------------


def _outcome(call: Callable[[], str]) -> tuple[str, ...]:
    try:
        return ("text", call())
    except SummarizerError as exc:
        return (type(exc).__name__, exc.kind, str(exc.status), str(exc))


@pytest.mark.parametrize("script", ["success", "401", "404", "500", "empty", "html", "no-model"])
def test_the_async_client_answers_and_fails_exactly_like_the_sync_one(
    protocol: Protocol, server: FakeLLMServer, keyed: str, script: str
) -> None:
    import asyncio

    from hermes_plugins.summarizers_async import asummarize

    reply = {
        "success": protocol.success("## Goal\nthe same summary"),
        "401": protocol.error(401, "invalid api key"),
        "404": protocol.error(404, "model: summary-model"),
        "500": protocol.error(500, "internal failure"),
        "empty": Reply(status=200, body=b""),
        "html": Reply(status=200, body=b"<html>captive portal</html>"),
        "no-model": protocol.success("never asked"),
    }[script]
    server.push(reply)
    if script == "no-model":
        config = load_config(data={"compression": {"summary": {
            "provider": protocol.provider, "base_url": server.base_url}}}, env={})
        sync, asynchronous = protocol.factory(config), protocol.factory(config)
    else:
        sync, asynchronous = (summarizer_for(protocol, server.base_url) for _ in range(2))
    expected = _outcome(lambda: sync.summarize(request()))
    assert _outcome(lambda: asyncio.run(asummarize(asynchronous, request()))) == expected
    assert len(server.requests) == (0 if script == "no-model" else 2)
    if script == "success":
        assert expected == ("text", "## Goal\nthe same summary")

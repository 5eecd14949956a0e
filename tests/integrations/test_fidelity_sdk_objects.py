"""SDK response objects become history with nothing lost (issue 28): an Anthropic ``Message``
keeps every block (thinking with its signature, redacted thinking, citations, server-tool
blocks) for the next Anthropic request; a ``ChatCompletion`` keeps its refusal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.sdk import as_message

import validators_anthropic
import validators_openai_chat
from fidelity_fixtures import open_session

anthropic_types = pytest.importorskip("anthropic.types")
openai_types = pytest.importorskip("openai.types.chat")

REPLY = {
    "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
    "stop_reason": "tool_use", "stop_sequence": None,
    "usage": {"input_tokens": 900, "output_tokens": 50},
    "content": [
        {"type": "thinking", "thinking": "Search first, then read.", "signature": "EqQBCkYIBxgCKkA-sig"},
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix-redacted"},
        {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "hermes"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01", "content": [
            {"type": "web_search_result", "url": "https://example.com/h", "title": "Hermes",
             "encrypted_content": "Eo8BCioIAhgB", "page_age": None}]},
        {"type": "text", "text": "Hermes is a messenger.", "citations": [
            {"type": "web_search_result_location", "url": "https://example.com/h", "title": "Hermes",
             "encrypted_index": "Eo8BCioIAhgB", "cited_text": "Hermes is a messenger"}]},
        {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "notes.md"}},
    ],
}


def test_an_anthropic_message_keeps_every_block_for_the_next_request(tmp_path: Path) -> None:
    message = anthropic_types.Message.model_validate(REPLY)
    reply = as_message(message)
    assert reply["content"] == "Hermes is a messenger."
    assert reply["tool_calls"][0]["id"] == "toolu_01"
    kept = reply["_anthropic_content"]
    assert [b["type"] for b in kept] == [b["type"] for b in REPLY["content"]]
    assert json.dumps(kept[:2]) == json.dumps(REPLY["content"][:2])  # the API's bytes, key order too
    history = [{"role": "user", "content": "Who is Hermes? Then read notes.md."}, message,
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01",
                                             "is_error": True, "content": "no such file"}]}]
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    sent = request["messages"][1]["content"]
    assert [json.dumps({k: v for k, v in b.items() if k != "cache_control"}) for b in sent] == [
        json.dumps(b) for b in kept]
    assert request["messages"][2]["content"][0]["is_error"] is True


def test_a_chat_completion_keeps_its_refusal(tmp_path: Path) -> None:
    completion = openai_types.ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": None, "refusal": "I can't help with that."}}],
    })
    reply = as_message(completion)
    assert reply == {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    history = [{"role": "user", "content": "Do the bad thing."}, reply, {"role": "user", "content": "OK, something else."}]
    session = open_session(tmp_path, provider="openai")
    request = session.request(history)
    validators_openai_chat.check(request)
    assert request["messages"][2] == reply
    to_claude = session.request(history, provider="anthropic")
    validators_anthropic.check(to_claude)
    sent = to_claude["messages"][1]["content"]
    assert [{k: v for k, v in b.items() if k != "cache_control"} for b in sent] == [
        {"type": "text", "text": "I can't help with that."}]

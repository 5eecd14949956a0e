"""Tool messages whose content is a string, ``""``, a list of text parts or ``[]``, as the Chat
API documents them: each target gets a result it takes that says the same (an empty list goes
to Chat as ``""``, counted: Chat refuses an empty content list)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from hermes_core.content_tokens import message_content_tokens

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import open_session

PARTS = [{"type": "text", "text": "line 1: ok"}, {"type": "text", "text": "line 2: crash in b.py"}]


def _history(content: Any, error: bool = False) -> list[dict[str, Any]]:
    result: dict[str, Any] = {"role": "tool", "tool_call_id": "call_1", "content": content}
    if error:
        result["_is_error"] = True
    return copy.deepcopy([
        {"role": "user", "content": "Run it."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run", "arguments": "{}"}}]},
        result, {"role": "user", "content": "Well?"}])


@pytest.mark.parametrize("content", ["all good", "", PARTS, []], ids=["text", "empty", "parts", "no-parts"])
def test_every_tool_content_shape_is_valid_everywhere(tmp_path: Path, content: Any) -> None:
    session = open_session(tmp_path, provider="openai")
    messages = session.before_request(_history(content))
    chat = session.request(messages)
    validators_openai_chat.check(chat)
    sent = chat["messages"][-2]["content"]
    assert sent == (content if content != [] else "")
    anthropic = session.request(messages, provider="anthropic")
    validators_anthropic.check(anthropic)
    result = next(b for m in anthropic["messages"] for b in m["content"] if b["type"] == "tool_result")
    assert result["content"] == content
    responses = session.request(messages, api="responses")
    validators_openai_responses.check(responses)
    output = next(i for i in responses["input"] if i.get("type") == "function_call_output")["output"]
    assert output == ("line 1: ok\n\nline 2: crash in b.py" if content == PARTS else (content or ""))


def test_an_empty_list_is_counted_and_an_error_flag_still_shows(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    chat = session.request(session.before_request(_history([], error=True)))
    validators_openai_chat.check(chat)
    assert chat["messages"][-2]["content"] == "[tool error]"
    report = session.last_request_report
    assert report is not None and report.converted.get('empty tool content list -> ""') == 1


def test_text_parts_count_like_the_same_text() -> None:
    as_parts = message_content_tokens({"role": "tool", "tool_call_id": "c", "content": [
        {"type": "text", "text": "word " * 1_000}, {"type": "text", "text": "word " * 1_000}]})
    as_text = message_content_tokens({"role": "tool", "tool_call_id": "c", "content": "word " * 2_000})
    assert abs(as_parts - as_text) <= 20 and as_text >= 2_000

"""OpenAI Chat assistant messages with more than text: an audio reply (``audio: {"id"}``, or the
response's whole ``audio`` object with its transcript), ``annotations`` (URL citations), a
refusal (field or part), content beside tool calls; and ``name`` on any message.

OpenAI Chat gets each as it came. Anthropic and the Responses API take no assistant audio: the
transcript when the host kept it (counted as converted), else a visible placeholder (counted);
before, the whole turn was dropped from an Anthropic request and silently from a Responses one.
Annotations and names they cannot carry are counted where they used to vanish unsaid.
"""

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

AUDIO_ID = "audio_67c8b4b1e8a48190"
TRANSCRIPT = "Sure: the meeting moved to Thursday at ten."
CITATION = {"type": "url_citation", "url_citation": {"url": "https://example.org/rfc", "title": "RFC",
                                                     "start_index": 0, "end_index": 12}}


def _history(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return copy.deepcopy([{"role": "user", "content": "When is the meeting?"}, reply,
                          {"role": "user", "content": "And where?"}])


def _requests(tmp_path: Path, history: list[dict[str, Any]]) -> tuple[Any, dict[str, Any], dict[str, Any],
                                                                     dict[str, Any]]:
    session = open_session(tmp_path, provider="openai")
    messages = session.before_request(history)
    chat = session.request(messages)
    validators_openai_chat.check(chat)
    anthropic = session.request(messages, provider="anthropic")
    validators_anthropic.check(anthropic)
    responses = session.request(messages, api="responses")
    validators_openai_responses.check(responses)
    return session, chat, anthropic, responses


def _assistant_texts(anthropic: dict[str, Any]) -> list[str]:
    return [b["text"] for m in anthropic["messages"] if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "text"]


def test_an_audio_reply_by_id_goes_to_chat_as_it_is_and_elsewhere_as_a_placeholder(tmp_path: Path) -> None:
    reply = {"role": "assistant", "content": None, "audio": {"id": AUDIO_ID}}
    session, chat, anthropic, responses = _requests(tmp_path, _history(reply))
    assert chat["messages"][-2] == reply
    assert _assistant_texts(anthropic) == [f"[audio reply omitted: {AUDIO_ID}]"]
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user"]  # the turn stays
    assert {"role": "assistant", "content": f"[audio reply omitted: {AUDIO_ID}]"} in responses["input"]
    kinds = {w.kind: w for w in session.warnings}
    assert kinds["responses_conversion"].details["audio_replies_replaced_by_placeholders"] == 1
    session.request(session.before_request(_history(reply)), provider="anthropic")
    report = session.last_request_report
    assert report is not None and report.placeholders == {"audio reply": 1}


def test_an_audio_reply_with_its_transcript_goes_as_its_words(tmp_path: Path) -> None:
    reply = {"role": "assistant", "content": None, "audio": {
        "id": AUDIO_ID, "data": "UklGRg==", "expires_at": 1_900_000_000, "transcript": TRANSCRIPT}}
    session, chat, anthropic, responses = _requests(tmp_path, _history(reply))
    assert chat["messages"][-2]["audio"] == {"id": AUDIO_ID}  # the request takes the id alone
    assert _assistant_texts(anthropic) == [TRANSCRIPT]
    assert {"role": "assistant", "content": TRANSCRIPT} in responses["input"]
    session.request(session.before_request(_history(reply)), provider="anthropic")
    report = session.last_request_report
    assert report is not None and report.lossless
    assert report.converted == {"audio reply -> its transcript": 1}
    session.request(session.before_request(_history(reply)))
    assert session.last_request_report is not None
    assert session.last_request_report.converted == {"audio reply -> its id": 1}


def test_an_audio_reply_counts_in_the_estimate() -> None:
    bare = {"role": "assistant", "content": None}
    by_id = {**bare, "audio": {"id": AUDIO_ID}}
    spoken = {**bare, "audio": {"id": AUDIO_ID, "transcript": "word " * 2_000}}
    assert message_content_tokens(bare) < message_content_tokens(by_id) < message_content_tokens(spoken)
    assert message_content_tokens(spoken) >= 2_000


def test_annotations_are_kept_for_chat_and_counted_where_they_cannot_go(tmp_path: Path) -> None:
    reply = {"role": "assistant", "content": "RFC 9110 says so.", "annotations": [CITATION, CITATION]}
    session, chat, anthropic, responses = _requests(tmp_path, _history(reply))
    assert chat["messages"][-2] == reply
    assert _assistant_texts(anthropic) == ["RFC 9110 says so."]
    assert {"role": "assistant", "content": "RFC 9110 says so."} in responses["input"]
    kinds = {w.kind: w for w in session.warnings}
    assert kinds["request_content_converted"].details["dropped"] == {"annotations of an assistant message": 2}
    assert kinds["responses_conversion"].details["assistant_annotations_dropped"] == 2


def test_a_refusal_as_a_field_or_a_part_is_the_same_words_everywhere(tmp_path: Path) -> None:
    words = "I can't help with that."
    for n, reply in enumerate([{"role": "assistant", "content": None, "refusal": words},
                               {"role": "assistant", "content": [{"type": "refusal", "refusal": words}]}]):
        (tmp_path / str(n)).mkdir()
        _session, chat, anthropic, responses = _requests(tmp_path / str(n), _history(reply))
        sent = chat["messages"][-2]
        assert sent.get("refusal") == words or sent["content"] == reply["content"]
        assert _assistant_texts(anthropic) == [words]
        assert any(words in str(item.get("content")) for item in responses["input"]
                   if item.get("role") == "assistant")


def test_content_beside_tool_calls_keeps_its_place_before_them(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "Look it up."},
               {"role": "assistant", "content": "Checking the calendar.", "tool_calls": [
                   {"id": "call_1", "type": "function", "function": {"name": "calendar", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "call_1", "content": "Thursday 10:00"}]
    _session, chat, anthropic, responses = _requests(tmp_path, copy.deepcopy(history))
    assert chat["messages"][-2]["content"] == "Checking the calendar."
    blocks = anthropic["messages"][1]["content"]
    assert [b["type"] for b in blocks] == ["text", "tool_use"] and blocks[0]["text"] == "Checking the calendar."
    kinds = [i.get("type") or i.get("role") for i in responses["input"]]
    assert kinds == ["user", "assistant", "function_call", "function_call_output"]


def test_names_go_to_chat_and_are_counted_where_they_cannot(tmp_path: Path) -> None:
    history = [{"role": "developer", "content": "Be brief.", "name": "ops"},
               {"role": "user", "content": "Hi, I am Ana.", "name": "ana"},
               {"role": "assistant", "content": "Hello Ana.", "name": "helper"},
               {"role": "user", "content": "And Bo here.", "name": "bo"}]
    session, chat, _anthropic, _responses = _requests(tmp_path, copy.deepcopy(history))
    assert chat["messages"][1:] == history
    kinds = {w.kind: w for w in session.warnings}
    assert kinds["request_content_converted"].details["dropped"] == {"name of a message": 4}
    assert kinds["responses_conversion"].details["message_names_dropped"] == 4


def test_an_sdk_reply_keeps_its_audio_and_annotations() -> None:
    openai = pytest.importorskip("openai")
    from hermes_core.sdk import as_message

    completion = openai.types.chat.ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-audio",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": None, "refusal": None, "annotations": [CITATION],
            "audio": {"id": AUDIO_ID, "data": "UklGRg==", "expires_at": 1_900_000_000, "transcript": TRANSCRIPT}}}],
    })
    message = as_message(completion)
    assert message["audio"]["id"] == AUDIO_ID and message["audio"]["transcript"] == TRANSCRIPT
    assert message["annotations"] == [CITATION]
    plain = as_message(openai.types.chat.ChatCompletion.model_validate({
        "id": "chatcmpl-2", "object": "chat.completion", "created": 1, "model": "gpt-5",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "hi", "annotations": [], "audio": None}}]}))
    assert "audio" not in plain and "annotations" not in plain  # nothing added where there is nothing

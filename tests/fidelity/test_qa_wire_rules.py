"""Histories a host really holds that reached a provider invalid (QA findings, issue 28).

Each case went out breaking the provider's documented rules (tests/support/validators_*.py) before:
a model's invalid-JSON tool arguments as an ``_``-key on the Anthropic wire, JSON arguments that
are not an object as a non-object ``input``, tool-call ids other providers write
(``functions.read_file:0``) that the Messages API's id pattern rejects, tool-call arguments a
host holds as an object sent to Chat as an object, and a Responses turn of reasoning alone sent
to Chat as an empty assistant message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import open_session


def _call_history(arguments: Any, ident: str = "call_1") -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": ident, "type": "function", "function": {"name": "read_file", "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": ident, "content": "file text"},
        {"role": "user", "content": "and now?"},
    ]


def _tool_use(request: dict[str, Any]) -> dict[str, Any]:
    return next(b for m in request["messages"] if m["role"] == "assistant" for b in m["content"]
                if b["type"] == "tool_use")


@pytest.mark.parametrize("arguments", ["not json{", "[1,2]", "7", '"a string"'])
def test_arguments_that_are_not_a_json_object_reach_anthropic_as_written(tmp_path: Path, arguments: str) -> None:
    session = open_session(tmp_path)
    request = session.request(session.before_request(_call_history(arguments)))
    validators_anthropic.check(request)
    assert _tool_use(request)["input"] == {"arguments": arguments}
    assert sum(session.last_request_report.converted.values()) == 1


def test_object_arguments_still_go_as_the_object(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    request = session.request(session.before_request(_call_history('{"path": "a.py"}')))
    assert _tool_use(request)["input"] == {"path": "a.py"}
    assert session.last_request_report.lossless


def test_ids_the_messages_api_rejects_are_renamed_with_their_results(tmp_path: Path) -> None:
    history = _call_history('{"path": "a.py"}', ident="functions.read_file:0")
    history += _call_history('{"path": "b.py"}', ident="functions.read_file;0")[1:]
    session = open_session(tmp_path)
    request = session.request(session.before_request(history))
    validators_anthropic.check(request)
    uses = [b["id"] for m in request["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in request["messages"] for b in m["content"]
               if b["type"] == "tool_result"]
    assert uses == results and len(set(uses)) == 2  # two ids stay two, each with its result
    # OpenAI takes them as they are, in Chat and in the Responses API (no rename, no warning).
    chat = session.request(session.before_request(history), provider="openai")
    assert [c["id"] for m in chat["messages"] for c in m.get("tool_calls") or ()] == [
        "functions.read_file:0", "functions.read_file;0"]
    session.warnings  # noqa: B018 - drained: only the Responses request's are read below
    responses = session.request(session.before_request(history), provider="openai", api="responses")
    assert [i["call_id"] for i in responses["input"] if i.get("type") == "function_call"] == [
        "functions.read_file:0", "functions.read_file;0"]
    assert session.warnings == []


def test_arguments_held_as_an_object_reach_chat_as_json_text(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    request = session.request(session.before_request(_call_history({"path": "a.py"})))
    validators_openai_chat.check(request)
    call = request["messages"][2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"path": "a.py"}
    assert sum(session.last_request_report.converted.values()) == 1


REASONING = {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-1==",
             "summary": [{"type": "summary_text", "text": "plan the fix"}]}


def test_a_turn_of_reasoning_alone_reaches_chat_as_a_counted_placeholder(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "think first"}, dict(REASONING),
               {"role": "user", "content": "now answer"}]
    session = open_session(tmp_path, provider="openai")
    messages = session.before_request(history)
    chat = session.request(messages)
    validators_openai_chat.check(chat)
    assert chat["messages"][2] == {"role": "assistant", "content": "[reasoning omitted: 12 characters]"}
    assert session.last_request_report.placeholders == {"reasoning": 1}
    # The other two shapes are unchanged: both valid, each leaving the lone reasoning out,
    # counted (a Responses reasoning item must be followed by the item it preceded).
    responses = session.request(messages, api="responses")
    validators_openai_responses.check(responses)
    anthropic = session.request(messages, provider="anthropic")
    validators_anthropic.check(anthropic)


# A byte a host decoded with errors="surrogateescape" (a file name that is not UTF-8, a
# command's output) is a lone surrogate: no UTF-8 encoder takes it and the Messages API answers
# "The request body is not valid JSON: no low surrogate in string" on every later turn.
SURROGATE_HISTORY = [
    {"role": "user", "content": "list the folder"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "caf\udce9"}'}}]},
    {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "caf\udce9.txt\nnotes.md"}]},
    {"role": "user", "content": "open the first \ud800 one"},
]


@pytest.mark.parametrize("target", [{}, {"provider": "openai"}, {"provider": "openai", "api": "responses"}])
def test_lone_surrogates_go_out_as_escape_text_with_a_warning(tmp_path: Path, target: dict[str, str]) -> None:
    session = open_session(tmp_path)
    history = json.loads(json.dumps(SURROGATE_HISTORY))  # the same strings, a copy
    messages = session.before_request(history)
    request = session.request(messages, **target)
    body = json.dumps(request, ensure_ascii=False)
    body.encode("utf-8")  # raised UnicodeEncodeError before
    assert "caf\\\\udce9.txt" in body and "\\\\ud800" in body  # visible as text, nothing lost
    kinds = [w.kind for w in session.warnings]
    assert kinds.count("lone_surrogates_escaped") == 3  # the call, its result, the request
    assert history == SURROGATE_HISTORY  # the host's messages are not changed


def test_the_arguments_keep_the_escape_text_when_parsed(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    request = session.request(session.before_request(json.loads(json.dumps(SURROGATE_HISTORY))))
    use = _tool_use(request)
    assert use["input"] == {"path": "caf\\udce9"}


@pytest.mark.parametrize("odd", [{"content": "from a reader without a role"},
                                 {"role": "wizard", "content": "a role of some reader's own"}])
def test_a_message_with_a_role_chat_does_not_know_goes_as_user_text_counted(tmp_path: Path,
                                                                             odd: dict[str, Any]) -> None:
    history = [{"role": "user", "content": "start"}, {"role": "assistant", "content": "ok"}, dict(odd)]
    session = open_session(tmp_path, provider="openai")
    chat = session.request(session.before_request(history))
    validators_openai_chat.check(chat)  # role-less or unknown: rejected before
    assert chat["messages"][-1] == {"role": "user", "content": odd["content"]}
    assert sum(session.last_request_report.converted.values()) == 1
    # As the Anthropic conversion already did.
    validators_anthropic.check(session.request(history, provider="anthropic"))


# The Messages API answers "text content blocks must contain non-whitespace text" to a text
# block of whitespace alone, and Claude itself sometimes replies "\n\n" beside a tool call:
# sent back as kept, that reply got every later request rejected.
BLANK_CASES = {
    "a kept reply's blank text beside its call": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "sig-1"},
            {"type": "text", "text": "\n\n"},
            {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}]},
    ],
    "a kept reply of blank text alone": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": " \n"}]},
        {"role": "user", "content": "next"},
    ],
    "a blank text part beside the request": [
        {"role": "user", "content": [{"type": "text", "text": "  "}, {"type": "text", "text": "what is it?"}]},
    ],
}


@pytest.mark.parametrize("name", sorted(BLANK_CASES))
def test_text_blocks_of_whitespace_alone_are_left_out_counted(tmp_path: Path, name: str) -> None:
    session = open_session(tmp_path)
    history = json.loads(json.dumps(BLANK_CASES[name]))
    request = session.request(session.before_request(history))
    validators_anthropic.check(request, thinking=True)
    assert sum(session.last_request_report.dropped.values()) >= 1
    if name.startswith("a kept reply's"):  # the thinking and the call go back as they came
        assert request["messages"][1]["content"][0] == BLANK_CASES[name][1]["content"][0]
        assert [b["type"] for b in request["messages"][1]["content"]] == ["thinking", "tool_use"]


def test_a_responses_item_kept_as_it_came_has_its_lone_surrogates_escaped_too(tmp_path: Path) -> None:
    history = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "caf\udce9.txt"},
        {"role": "user", "content": "next"},
    ]
    session = open_session(tmp_path, provider="openai")
    request = session.request(session.before_request(history), api="responses")
    validators_openai_responses.check(request)
    json.dumps(request, ensure_ascii=False).encode("utf-8")  # raised UnicodeEncodeError before
    output = next(i for i in request["input"] if i.get("type") == "function_call_output")
    assert output["output"] == "caf\\udce9.txt"
    warned = [w for w in session.warnings if w.kind == "responses_conversion"]
    assert warned and warned[0].details["lone_surrogates_escaped"] == 1

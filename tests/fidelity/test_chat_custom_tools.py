"""OpenAI Chat custom tool calls (``{"type": "custom", "custom": {"name", "input"}}``, free-text
input) beside function calls, through ``Session.request`` for every target and a compaction.

Chat sends them as they came; Anthropic gets a ``tool_use`` with the call's name and its text
under ``input`` (the custom tool defined as one string property ``input``), counted; the
Responses API its own ``custom_tool_call`` / ``custom_tool_call_output`` and flat custom tool.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hermes_core.content_tokens import message_content_tokens

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import open_session

PATCH = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
GRAMMAR = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"'
TOOLS = [
    {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}},
    {"type": "custom", "custom": {"name": "apply_patch", "description": "Apply a patch.",
                                  "format": {"type": "grammar", "grammar": {"syntax": "lark", "definition": GRAMMAR}}}},
]


def _history() -> list[dict[str, Any]]:
    return copy.deepcopy([
        {"role": "user", "content": "Fix a.py."},
        {"role": "assistant", "content": "Reading it, then patching.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path":"a.py"}'}},
            {"id": "call_2", "type": "custom", "custom": {"name": "apply_patch", "input": PATCH}},
        ]},
        {"role": "tool", "tool_call_id": "call_1", "content": "x = 1"},
        {"role": "tool", "tool_call_id": "call_2", "content": "Done: 1 file changed"},
        {"role": "user", "content": "Thanks. Now run the tests."},
    ])


def test_openai_chat_sends_custom_calls_as_they_came(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    history = _history()
    out = session.request(history, tools=TOOLS)
    validators_openai_chat.check(out)
    assert out["messages"][2]["tool_calls"] == history[1]["tool_calls"]
    assert TOOLS[1] in out["tools"]
    assert session.last_request_report is not None and session.last_request_report.lossless


def test_anthropic_gets_a_named_tool_use_with_the_text_as_input(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    out = session.request(_history(), tools=TOOLS)
    validators_anthropic.check(out)
    uses = [b for m in out["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert uses[1] == {"type": "tool_use", "id": "call_2", "name": "apply_patch", "input": {"input": PATCH}}
    results = [b for m in out["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == ["call_1", "call_2"]
    report = session.last_request_report
    assert report is not None and report.converted.get('custom tool call -> tool_use {"input": text}') == 1
    tool = next(t for t in out["tools"] if t["name"] == "apply_patch")
    assert tool["name"] == "apply_patch" and tool["description"] == "Apply a patch."
    schema = tool["input_schema"]
    assert schema["required"] == ["input"] and schema["properties"]["input"]["type"] == "string"
    assert GRAMMAR in schema["properties"]["input"]["description"]  # the model still sees the format


def test_responses_gets_its_own_custom_call_and_output(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    out = session.request(_history(), tools=TOOLS, api="responses")
    validators_openai_responses.check(out)
    by_kind = {item.get("type"): item for item in out["input"] if item.get("type")}
    assert by_kind["custom_tool_call"] == {"type": "custom_tool_call", "call_id": "call_2",
                                           "name": "apply_patch", "input": PATCH}
    assert by_kind["custom_tool_call_output"] == {"type": "custom_tool_call_output", "call_id": "call_2",
                                                  "output": "Done: 1 file changed"}
    assert by_kind["function_call_output"]["call_id"] == "call_1"
    assert {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
            "format": TOOLS[1]["custom"]["format"]} in out["tools"]


def test_a_custom_call_input_counts_in_the_estimate() -> None:
    small = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "custom", "custom": {"name": "apply_patch", "input": "x"}}]}
    big = copy.deepcopy(small)
    big["tool_calls"][0]["custom"]["input"] = "x" * 40_000
    assert message_content_tokens(big) - message_content_tokens(small) >= 9_000


def test_compaction_keeps_custom_calls_with_their_results(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai", context_length=8_000)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Patch every module."}]
    for n in range(12):
        history += [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{n}", "type": "custom",
                 "custom": {"name": "apply_patch", "input": PATCH + f"\n# module {n} " + "y" * 600}}]},
            {"role": "tool", "tool_call_id": f"call_{n}", "content": f"patched module {n} " + "z" * 600},
        ]
    history.append({"role": "user", "content": "Summarise what changed."})
    messages = session.compress(copy.deepcopy(history)).messages
    assert len(messages) < len(history)
    kept = {c["id"]: c for m in messages for c in m.get("tool_calls") or ()}
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert answered <= set(kept)  # no result without its call
    for ident in set(kept) & {f"call_{n}" for n in range(12)}:
        assert kept[ident]["type"] == "custom"  # a kept call is still the custom call it was
    validators_openai_chat.check(session.request(messages, tools=TOOLS))
    validators_anthropic.check(session.request(messages, provider="anthropic", tools=TOOLS))
    validators_openai_responses.check(session.request(messages, tools=TOOLS, api="responses"))
    assert json.dumps(messages[-1]) == json.dumps(history[-1])


def test_a_summary_reads_a_custom_call_by_its_name_and_text() -> None:
    from hermes_plugins.compressor.serialize import prepare_turns, serialize_turns

    text = serialize_turns(prepare_turns(_history()))
    assert "apply_patch(*** Begin Patch" in text  # not "unknown()"
    assert "TOOL RESULT call_2 (apply_patch)" in text


def test_a_responses_custom_call_is_a_chat_custom_call_everywhere(tmp_path: Path) -> None:
    """A custom call that came as a Responses item is Chat's custom call too: Chat sends it as
    one, Anthropic as {"input": text} like any custom call, and Responses as it came."""
    items = [{"role": "user", "content": "Fix a.py."},
             {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_c", "name": "apply_patch", "input": PATCH},
             {"type": "custom_tool_call_output", "call_id": "call_c", "output": "patched"},
             {"role": "user", "content": "Thanks."}]
    session = open_session(tmp_path, provider="openai")
    messages = session.before_request(copy.deepcopy(items))
    assert messages[1]["tool_calls"] == [{"id": "call_c", "type": "custom",
                                          "custom": {"name": "apply_patch", "input": PATCH}}]
    chat = session.request(messages, tools=TOOLS)
    validators_openai_chat.check(chat)
    anthropic = session.request(messages, provider="anthropic", tools=TOOLS)
    validators_anthropic.check(anthropic)
    use = next(b for m in anthropic["messages"] for b in m["content"] if b["type"] == "tool_use")
    assert use["input"] == {"input": PATCH}
    responses = session.request(messages, tools=TOOLS, api="responses")
    validators_openai_responses.check(responses)
    assert json.dumps(responses["input"][1:3]) == json.dumps(items[1:3])  # as they came


def test_a_custom_tool_defined_the_responses_way_goes_to_each_target_in_its_shape(tmp_path: Path) -> None:
    flat = {"type": "custom", "name": "apply_patch", "description": "Apply a patch.",
            "format": TOOLS[1]["custom"]["format"]}
    session = open_session(tmp_path, provider="openai")
    chat = session.request(_history(), tools=[flat])
    assert chat["tools"] == [TOOLS[1]]
    anthropic = session.request(_history(), provider="anthropic", tools=[flat])
    assert anthropic["tools"][0]["input_schema"]["required"] == ["input"]
    assert anthropic["tools"][0]["name"] == "apply_patch"
    responses = session.request(_history(), api="responses", tools=[flat])
    assert responses["tools"] == [flat]

"""SDK objects in (``as_message``, ``normalize_messages``, ``after_response``) and SDK keyword
arguments out (``Session.request``), plus ``handle_tool_call`` for every tool of a reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session, as_message, normalize_messages
from hermes_core.pairing import pairing_problems
from hermes_core.sdk import response_usage, sdk_kwargs

from hypothesis_budget import examples

openai_types = pytest.importorskip("openai.types.chat")
anthropic_types = pytest.importorskip("anthropic.types")

COMPLETION = {
    "id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-5",
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None, "reasoning_content": "think first",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}],
    }}],
    "usage": {"prompt_tokens": 1234, "completion_tokens": 5, "total_tokens": 1239},
}
CLAUDE = {
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
    "stop_reason": "tool_use", "stop_sequence": None,
    "content": [
        {"type": "thinking", "thinking": "plan", "signature": "sig"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    ],
    "usage": {"input_tokens": 900, "output_tokens": 5, "cache_read_input_tokens": 100},
}


def _completion() -> Any:
    return openai_types.ChatCompletion.model_validate(COMPLETION)


def test_an_openai_completion_and_its_message_become_the_same_plain_dict() -> None:
    completion = _completion()
    expected = {
        "role": "assistant", "content": None, "_reasoning": "think first",
        "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"path\": \"a.py\"}"}}],
    }
    assert as_message(completion) == expected
    assert as_message(completion.choices[0].message) == expected
    assert type(as_message(completion)) is dict


def test_an_anthropic_message_becomes_an_openai_format_dict() -> None:
    message = anthropic_types.Message.model_validate(CLAUDE)
    assert as_message(message) == {
        "role": "assistant", "content": "Reading it.", "_reasoning": "plan",
        "tool_calls": [{"id": "toolu_1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"path\":\"a.py\"}"}}],
        # the signed thinking goes back to Anthropic as it came (issue 28)
        "_anthropic_content": CLAUDE["content"],
    }


def test_anthropic_tool_results_become_tool_messages_with_error_flags() -> None:
    history = [
        {"role": "user", "content": "go"},
        CLAUDE,
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": [{"type": "text", "text": "no such file"}]},
            {"type": "text", "text": "try b.py"},
        ]},
    ]
    out = normalize_messages(history)
    assert out[2] == {"role": "tool", "tool_call_id": "toolu_1", "content": "no such file",
                      "_is_error": True}
    assert out[3] == {"role": "user", "content": "try b.py"}
    assert pairing_problems(out) == []
    assert history[2]["content"][0]["type"] == "tool_result"  # the input is not mutated


plain_message = st.fixed_dictionaries({
    "role": st.sampled_from(["user", "assistant", "system"]),
    "content": st.one_of(st.none(), st.text(max_size=20)),
})


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(plain_message, max_size=12))
def test_plain_openai_histories_come_back_as_the_same_list(messages: list[dict[str, Any]]) -> None:
    assert normalize_messages(messages) is messages


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(plain_message, max_size=8), st.integers(min_value=0, max_value=8))
def test_an_sdk_object_anywhere_is_converted_and_the_rest_kept(
    messages: list[dict[str, Any]], where: int
) -> None:
    where = min(where, len(messages))
    mixed = [*messages[:where], _completion().choices[0].message, *messages[where:]]
    out = normalize_messages(mixed)
    assert all(type(m) is dict for m in out) and len(out) == len(mixed)
    assert out[:where] == messages[:where] and out[where + 1:] == messages[where:]
    assert all(a is b for a, b in zip(out[:where], messages[:where], strict=True))
    assert out[where]["tool_calls"][0]["id"] == "call_1"


def test_a_message_that_is_neither_dict_nor_sdk_object_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="must be a dict or an SDK message object, got int"):
        normalize_messages([{"role": "user", "content": "x"}, 42])


def test_response_usage_takes_whole_responses_and_usages() -> None:
    assert response_usage(_completion()).prompt_tokens == 1234
    assert response_usage(CLAUDE) == CLAUDE["usage"]
    assert response_usage({"prompt_tokens": 3}) == {"prompt_tokens": 3}


def _session(tmp_path: Path, **kwargs: Any) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5", provider="openai",
                        context_length=200_000, persist=False, env={}, **kwargs)


def test_an_sdk_reply_appended_to_the_history_survives_the_next_request(tmp_path: Path) -> None:
    session = _session(tmp_path)
    completion = _completion()
    messages: list[Any] = [{"role": "user", "content": "read a.py"}, completion.choices[0].message]
    messages = session.after_response(completion, messages)
    assert all(type(m) is dict for m in messages)
    assert session.engine.last_prompt_tokens == 1234  # the whole response's usage was read
    messages.append({"role": "tool", "tool_call_id": "call_1", "content": "x = 1"})
    messages = session.before_request(messages)
    kwargs = session.request(messages)
    assert [m["role"] for m in kwargs["messages"]] == ["system", "user", "assistant", "tool"]


def test_request_returns_sdk_keyword_arguments_for_both_wire_formats(tmp_path: Path) -> None:
    session = _session(tmp_path, max_tokens=1000)
    tools = [{"type": "function", "source": "mcp-x",
              "function": {"name": "t", "parameters": {"type": "object"}, "x-extra": 1}}]
    messages = [{"role": "user", "content": "hi", "_injected": "system-reminder"}]
    openai_kwargs = session.request(messages, tools=tools)
    assert set(openai_kwargs) == {"model", "messages", "tools", "prompt_cache_key", "max_tokens"}
    assert openai_kwargs["tools"] == [{"type": "function",
                                       "function": {"name": "t", "parameters": {"type": "object"}}}]
    assert openai_kwargs["messages"][1] == {"role": "user", "content": "hi"}
    claude = session.request(messages, provider="anthropic", tools=tools, max_tokens=64)
    assert set(claude) == {"model", "system", "messages", "tools", "max_tokens"}
    assert claude["max_tokens"] == 64
    assert claude["tools"] == [{"name": "t", "input_schema": {"type": "object"}}]
    assert sdk_kwargs({"provider": "anthropic", "messages": []})["max_tokens"] == 8192


def test_the_anthropic_sdk_accepts_the_request_as_it_is(tmp_path: Path) -> None:
    import anthropic

    session = _session(tmp_path)
    kwargs = session.request([{"role": "user", "content": "hi"}], provider="anthropic")
    # The SDK validates its keyword arguments before any network use: an unknown key raises.
    client = anthropic.Anthropic(api_key="x", base_url="http://127.0.0.1:9", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(**kwargs, timeout=0.5)


# --- handle_tool_call ---------------------------------------------------------------------------

DEFERRED = {"type": "function", "source": "mcp-github", "function": {
    "name": "create_issue", "description": "Open a GitHub issue.",
    "parameters": {"type": "object", "properties": {"title": {"type": "string"}},
                   "required": ["title"]}}}
OWN = {"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                        "parameters": {"type": "object"}}}


def test_the_bridge_is_answered_over_the_catalog_last_assembled(tmp_path: Path) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    session = _session(tmp_path, invoke=lambda name, args: calls.append((name, args)) or "ok")
    session.assemble_tools([OWN, DEFERRED])
    found = json.loads(session.handle_tool_call("tool_search", '{"queries": ["github issue"]}'))
    assert "create_issue" in found["tools"]
    described = json.loads(session.handle_tool_call("tool_describe", {"names": ["create_issue"]}))
    assert described["tools"]["create_issue"]["parameters"]["required"] == ["title"]
    bad = json.loads(session.handle_tool_call("tool_call", {"calls": [{"name": "create_issue",
                                                                        "arguments": {}}]}))
    assert "NOT invoked" in bad["error"] and calls == []
    answer = session.handle_tool_call(
        "tool_call", {"calls": [{"name": "create_issue", "arguments": {"title": "x"}}]})
    assert answer == "ok" and calls == [("create_issue", {"title": "x"})]


def test_the_hosts_own_tools_run_through_invoke_and_the_result_limits(tmp_path: Path) -> None:
    session = _session(tmp_path)
    big = "line\n" * 200_000
    out = session.handle_tool_call("read_file", {"path": "a"}, invoke=lambda name, args: big)
    assert isinstance(out, str) and len(out) < len(big)  # spilled or truncated, never whole
    with pytest.raises(KeyError, match="no invoke was given"):
        session.handle_tool_call("read_file", {"path": "a"})


def test_a_bridge_call_without_invoke_or_catalog_answers_the_model_and_warns(tmp_path: Path) -> None:
    session = _session(tmp_path)
    assert "assemble_tools" in json.loads(session.handle_tool_call("tool_search", {"queries": ["x"]}))["error"]
    session.assemble_tools([OWN, DEFERRED])
    session.warnings  # noqa: B018 - drain the build's warnings
    answer = json.loads(session.handle_tool_call(
        "tool_call", {"calls": [{"name": "create_issue", "arguments": {"title": "x"}}]}))
    assert "failed" in answer["error"]
    assert [w.kind for w in session.warnings] == ["tool_call_without_invoke"]


def test_the_hosts_own_tools_stay_visible_and_declared_sources_go_behind_the_bridge(tmp_path: Path) -> None:
    from hermes_core import load_config

    own = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    mcp_named = {"type": "function", "function": {"name": "mcp__jira__create", "parameters": {}}}
    listed = {"type": "function", "function": {"name": "export_all", "parameters": {}}}
    session = _session(tmp_path)
    names = [d["function"]["name"] for d in session.assemble_tools([own, DEFERRED, mcp_named])]
    assert "get_weather" in names and "tool_search" in names
    assert "create_issue" not in names and "mcp__jira__create" not in names
    assert [d["function"]["name"] for d in session.assemble_tools([own, listed])] == ["get_weather", "export_all"]
    config = load_config(home=tmp_path, env={}, data={"tools": {"search": {"defer": ["export_all"]}}})
    deferring = _session(tmp_path, config=config)
    names = [d["function"]["name"] for d in deferring.assemble_tools([own, listed])]
    assert "get_weather" in names and "export_all" not in names and "tool_search" in names

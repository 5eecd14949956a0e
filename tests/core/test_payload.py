"""The request payload: canonical bytes, copy-on-write, the layout hook, the wire formats."""

from __future__ import annotations

import copy
import json
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Config, PayloadContext, PluginHost, hookimpl
from hermes_core.payload import (
    assemble_payload,
    build_request,
    canonical_arguments,
    canonical_message,
    canonical_tools,
    user_breakpoints,
)
from hermes_core.sdk import sdk_kwargs
from hermes_core.wire import to_anthropic, to_openai
from hermes_plugins.cache_rules import PromptCachingSettings

from hypothesis_budget import examples


def fn_tool(name: str, description: str = "") -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": {"type": "object", "properties": {}}}}


def call(ident: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": arguments}}


HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "  fix the bug \n"},
    {"role": "assistant", "content": "", "tool_calls": [call("c1", "read_file", '{"path": "a.py", "limit": 10}')]},
    {"role": "tool", "tool_call_id": "c1", "content": "def f(): pass\n"},
    {"role": "assistant", "content": "Done.", "_compressed_summary": True, "_turn": 3},
]


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


# --- canonicalisation -----------------------------------------------------------------------


def test_string_contents_are_stripped() -> None:
    payload = assemble_payload("  system  \n", HISTORY)
    assert payload["system"] == "system"
    assert payload["messages"][0]["content"] == "fix the bug"
    assert payload["messages"][2]["content"] == "def f(): pass"


def test_tool_call_arguments_are_canonical_json() -> None:
    payload = assemble_payload("", HISTORY)
    args = payload["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert args == '{"limit":10,"path":"a.py"}'
    # The same call written with another key order and spacing gives the same bytes.
    other = [{**HISTORY[1], "tool_calls": [call("c1", "read_file", '{ "limit":10,\n "path":"a.py"}')]}]
    assert dumps(assemble_payload("", other)["messages"][0]) == dumps(payload["messages"][1])


def test_arguments_that_are_not_json_are_left_alone() -> None:
    assert canonical_arguments("{not json") == "{not json"
    message = {"role": "assistant", "content": "", "tool_calls": [call("c", "t", "{not json")]}
    assert canonical_message(message) is message


def test_non_ascii_arguments_stay_readable() -> None:
    assert canonical_arguments('{"q": "über"}') == '{"q":"über"}'


def test_metadata_keys_and_top_level_markers_are_removed_block_markers_kept() -> None:
    # A top-level marker is the layout's own form (never the host's); a marker on a content
    # block is the host's own breakpoint (issue 28): kept, and counted by the layout.
    marked = {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}],
              "cache_control": {"type": "ephemeral"}}
    payload = assemble_payload("", [*HISTORY, marked])
    assert payload["messages"][3] == {"role": "assistant", "content": "Done."}
    assert payload["messages"][4] == {"role": "user", "content": [
        {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}]}
    assert dumps(payload).count("cache_control") == 1


def test_tools_are_sorted_by_name_in_either_format() -> None:
    tools = [fn_tool("write_file"), {"name": "browser", "input_schema": {}}, fn_tool("read_file")]
    assert [t.get("name") or t["function"]["name"] for t in canonical_tools(tools)] == [
        "browser", "read_file", "write_file",
    ]
    assert canonical_tools(None) == []


def test_reordered_tools_give_identical_bytes() -> None:
    tools = [fn_tool(n) for n in ("terminal", "memory", "web_search", "patch")]
    first = assemble_payload("sys", HISTORY, tools)
    again = assemble_payload("sys", HISTORY, list(reversed(tools)))
    assert dumps(first) == dumps(again)


def test_input_is_never_mutated_and_unchanged_messages_are_shared() -> None:
    history = copy.deepcopy(HISTORY) + [{"role": "user", "content": "clean"}]
    before = copy.deepcopy(history)
    tools = [fn_tool("b"), fn_tool("a")]
    payload = assemble_payload("sys", history, tools)
    assert history == before
    assert [t["function"]["name"] for t in tools] == ["b", "a"]
    assert payload["messages"] is not history
    assert payload["messages"][4] is history[4]  # nothing to change: the same object
    assert payload["messages"][0] is not history[0]  # stripped: a copy


def test_a_leading_system_message_becomes_the_system_text() -> None:
    payload = assemble_payload(None, [{"role": "system", "content": " S "}, *HISTORY[:1]])
    assert payload["system"] == "S"
    assert [m["role"] for m in payload["messages"]] == ["user"]
    kept = assemble_payload("given", [{"role": "system", "content": "S"}, *HISTORY[:1]])
    assert kept["system"] == "given" and kept["messages"][0]["role"] == "system"


def test_payload_shape() -> None:
    payload = assemble_payload("sys", HISTORY[:1], [fn_tool("a")], provider="anthropic", model="m")
    assert set(payload) == {"provider", "model", "system", "messages", "tools"}
    assert payload["provider"] == "anthropic" and payload["model"] == "m"


# --- build_request and the layout hook ------------------------------------------------------


@attrs.define
class FakeSession:
    """Only what ``build_request`` may read from a Session."""

    host: PluginHost
    config: Config = attrs.field(factory=Config)
    session_id: str = "sess-1"
    model: str = "claude-sonnet-4"
    provider: str = "anthropic"
    asked: list[Any] = attrs.field(factory=list)

    def request_system_text(self, ephemeral: str | None = None) -> str:
        self.asked.append(ephemeral)
        return "cached prompt" + (f"\n\n{ephemeral}" if ephemeral else "")


class SpyLayout:
    def __init__(self) -> None:
        self.seen: list[tuple[dict[str, Any], PayloadContext]] = []

    @hookimpl(tryfirst=True)
    def hermes_payload_cache_layout(self, payload: dict[str, Any], ctx: PayloadContext) -> None:
        self.seen.append((payload, ctx))


def test_build_request_passes_the_canonical_payload_and_context_to_the_hook(
    plugin_host: PluginHost, register_plugin: Any
) -> None:
    spy = register_plugin(SpyLayout(), "spy")
    session = FakeSession(host=plugin_host)
    result = build_request(session, HISTORY, tools=[fn_tool("z"), fn_tool("a")], ephemeral="be brief")
    payload, ctx = spy.seen[0]
    assert session.asked == ["be brief"]
    assert payload["system"] == "cached prompt\n\nbe brief"
    assert [t["function"]["name"] for t in payload["tools"]] == ["a", "z"]
    assert ctx.provider == "anthropic" and ctx.model == "claude-sonnet-4" and ctx.session_id == "sess-1"
    assert ctx.config is session.config
    assert ctx.cache_ttl is None  # none asked: the layout plugin reads prompt_caching.cache_ttl
    # The built-in layout answered after the spy: the system prompt is marked.
    assert result["system"][0]["cache_control"]["type"] == "ephemeral"


def test_build_request_reads_the_ttl_from_config(plugin_host: PluginHost, register_plugin: Any) -> None:
    spy = register_plugin(SpyLayout(), "spy")
    config = Config().with_sections(PromptCachingSettings(cache_ttl="1h"))
    result = build_request(FakeSession(host=plugin_host, config=config), HISTORY)
    assert spy.seen[0][1].cache_ttl is None
    assert result["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    default = build_request(FakeSession(host=plugin_host), HISTORY)
    assert default["system"][0]["cache_control"] == {"type": "ephemeral"}


def test_provider_argument_overrides_the_sessions(plugin_host: PluginHost) -> None:
    result = build_request(FakeSession(host=plugin_host), HISTORY, provider="openai")
    assert result["provider"] == "openai"
    assert isinstance(result["system"], str)  # no markers for OpenAI
    assert result["prompt_cache_key"].startswith("hermes-")


def test_without_any_layout_the_canonical_payload_goes_out(plugin_host: PluginHost) -> None:
    result = build_request(FakeSession(host=plugin_host, provider="nobody-knows"), HISTORY)
    assert result == assemble_payload("cached prompt", HISTORY, provider="nobody-knows",
                                      model="claude-sonnet-4")


# --- wire formats ---------------------------------------------------------------------------


def test_to_openai_prepends_a_non_empty_system_message() -> None:
    payload = assemble_payload("sys", HISTORY[:1], [{"name": "a", "description": "d", "input_schema": {"type": "object"}}],
                               model="gpt-4o")
    payload["prompt_cache_key"] = "k"
    wire = to_openai(payload)
    assert wire["messages"][0] == {"role": "system", "content": "sys"}
    assert wire["model"] == "gpt-4o" and wire["prompt_cache_key"] == "k"
    assert wire["tools"] == [{"type": "function", "function": {
        "name": "a", "description": "d", "parameters": {"type": "object"}}}]
    assert to_openai(assemble_payload("", HISTORY[:1]))["messages"][0]["role"] == "user"
    assert "tools" not in to_openai(assemble_payload("", HISTORY[:1]))


def test_to_anthropic_converts_tool_calls_results_and_markers() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "reading", "tool_calls": [
            call("c1", "read", '{"p": 1}'), call("c2", "read", '{"p": 2}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": "two", "cache_control": {"type": "ephemeral"}},
    ]
    payload = assemble_payload("sys", messages, [fn_tool("read", "reads")], model="claude")
    wire = to_anthropic(payload)
    assert wire["system"] == "sys" and wire["model"] == "claude"
    assert wire["tools"] == [{"name": "read", "description": "reads",
                              "input_schema": {"type": "object", "properties": {}}}]
    assistant = wire["messages"][1]
    assert assistant["role"] == "assistant"
    assert assistant["content"][0] == {"type": "text", "text": "reading"}
    assert assistant["content"][1] == {"type": "tool_use", "id": "c1", "name": "read", "input": {"p": 1}}
    results = wire["messages"][2]
    assert results["role"] == "user" and len(results["content"]) == 2  # one message for the batch
    assert results["content"][0] == {"type": "tool_result", "tool_use_id": "c1", "content": "one"}


def test_to_anthropic_moves_a_top_level_marker_onto_the_last_block() -> None:
    marker = {"type": "ephemeral"}
    payload = {"system": "s", "messages": [
        {"role": "tool", "tool_call_id": "c1", "content": "x", "cache_control": marker}]}
    wire = to_anthropic(payload)
    assert wire["messages"][0]["content"][-1]["cache_control"] == marker


# --- properties -----------------------------------------------------------------------------

_text = st.text(alphabet=st.sampled_from(" \n\tab{}\":,1é"), max_size=12)
_json_args = st.tuples(
    st.dictionaries(st.sampled_from(["b", "a", "path", "z"]), st.integers() | _text, max_size=4),
    st.sampled_from([None, 1]),
).map(lambda pair: json.dumps(pair[0], indent=pair[1]))
_call = st.builds(call, st.sampled_from(["c1", "c2", "c3"]), st.sampled_from(["t", "u"]), _json_args | _text)
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t: {"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}, _text),
    st.builds(lambda: {"type": "image", "source": {"type": "base64", "data": "AAAA"}}),
)
_content = st.one_of(st.none(), _text, st.lists(_block, max_size=3))
_message = st.one_of(
    st.builds(lambda c: {"role": "user", "content": c}, _content),
    st.builds(lambda c, calls: {"role": "assistant", "content": c, **({"tool_calls": calls} if calls else {})},
              _content, st.lists(_call, max_size=3)),
    st.builds(lambda c: {"role": "tool", "tool_call_id": "c1", "content": c}, st.one_of(_text, st.none())),
    st.builds(lambda c: {"role": "system", "content": c}, _text),
    st.builds(lambda c: {"role": "user", "content": c, "_compressed_summary": True,
                         "cache_control": {"type": "ephemeral", "ttl": "1h"}}, _text),
)
_tools = st.lists(st.sampled_from(["a", "b", "terminal", "memory"]).map(fn_tool), max_size=4)


def count_markers(value: Any) -> int:
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(count_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_markers(v) for v in value)
    return 0


@settings(max_examples=examples(150), deadline=None)
@given(messages=st.lists(_message, max_size=12), tools=_tools, system=_text,
       provider=st.sampled_from(["anthropic", "openai", "openrouter", "other"]),
       ttl=st.sampled_from(["5m", "1h"]))
def test_payload_is_pure_bounded_and_byte_stable(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], system: str, provider: str, ttl: str
) -> None:
    from hermes_plugins import caching

    users = sum(user_breakpoints(m) for m in assemble_payload(system, messages)["messages"])
    ctx = PayloadContext(provider=provider, model="claude-x", session_id="s", cache_ttl=ttl,
                         user_breakpoints=users)
    before = copy.deepcopy(messages)
    tools_before = copy.deepcopy(tools)

    def build() -> dict[str, Any]:
        payload = assemble_payload(system, messages, tools, provider=provider)
        return caching.hermes_payload_cache_layout(payload, ctx) or payload

    first = build()
    assert messages == before and tools == tools_before
    # The layout gives way to the history's own markers; the wire never carries more than four.
    assert count_markers(first) <= max(4, users)
    if provider == "anthropic":
        assert count_markers(sdk_kwargs(first)) <= 4
    assert json.dumps(first) == json.dumps(build())
    assert json.dumps(build()) == json.dumps(
        caching.hermes_payload_cache_layout(
            assemble_payload(system, messages, list(reversed(tools)), provider=provider), ctx)
        or assemble_payload(system, messages, list(reversed(tools)), provider=provider)
    )


def test_build_request_never_emits_more_than_four_markers(plugin_host: PluginHost) -> None:
    marked = [{"role": "user", "content": [{"type": "text", "text": f"m{i}", "cache_control": {"type": "ephemeral"}}]}
              for i in range(10)]
    result = build_request(FakeSession(host=plugin_host), marked, tools=[{**fn_tool("a"), "cache_control": {}}])
    assert count_markers(result) == 10  # the history's own markers are kept in the payload ...
    notes: dict[str, int] = {}
    wire = sdk_kwargs(result, notes=notes)
    assert count_markers(wire) == 4  # ... and on the wire the latest four of them go out
    assert [b["text"] for m in wire["messages"] for b in m["content"] if "cache_control" in b] == [
        "m6", "m7", "m8", "m9"]
    assert notes == {"dropped:cache_control beyond the four Anthropic takes": 6}


@pytest.mark.parametrize("content", ["", None, [], "x"])
def test_odd_contents_survive_canonicalisation(content: Any) -> None:
    message = {"role": "assistant", "content": content}
    assert canonical_message(message) is message

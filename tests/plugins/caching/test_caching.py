"""The built-in ``caching`` plugin: system_and_3 breakpoints, prompt_cache_key, provider plugins."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from hermes_core import Config, PayloadContext, PluginHost, hookimpl
from hermes_core.payload import assemble_payload
from hermes_plugins import caching
from hermes_plugins.cache_rules import PromptCachingSettings
from hermes_plugins.caching import (
    LOOKBACK_BLOCKS,
    anthropic_layout,
    apply_cache_marker,
    block_count,
    cache_marker,
    can_carry_marker,
    choose_breakpoints,
    previous_request_end,
)

MARKER = {"type": "ephemeral"}


def msgs(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(n)]


def payload(system: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"system": system, "messages": messages, "tools": []}


def marked(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    if "cache_control" in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and "cache_control" in b for b in content)


def count_markers(value: Any) -> int:
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(count_markers(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_markers(v) for v in value)
    return 0


# --- the reference's cases (spec §16.2) -----------------------------------------------------


def test_empty_messages_give_a_new_empty_list() -> None:
    source: list[dict[str, Any]] = []
    out = anthropic_layout(payload("", source))
    assert out["messages"] == [] and out["messages"] is not source


def test_system_and_four_messages() -> None:
    out = anthropic_layout(payload("You are Hermes.", msgs(4)))
    assert out["system"] == [{"type": "text", "text": "You are Hermes.", "cache_control": MARKER}]
    assert [marked(m) for m in out["messages"]] == [False, True, True, True]
    assert out["messages"][1]["content"] == [{"type": "text", "text": "message 1", "cache_control": MARKER}]


def test_without_system_the_last_four_messages_are_marked() -> None:
    out = anthropic_layout(payload("", msgs(2)))
    assert [marked(m) for m in out["messages"]] == [True, True]
    out = anthropic_layout(payload("", msgs(6)))
    assert [marked(m) for m in out["messages"]] == [False, False, True, True, True, True]


def test_never_more_than_four_breakpoints() -> None:
    out = anthropic_layout(payload("s", msgs(10)))
    assert count_markers(out) == 4


def test_ttl_one_hour_adds_the_ttl_key_and_the_default_has_none() -> None:
    assert cache_marker("1h") == {"type": "ephemeral", "ttl": "1h"}
    assert cache_marker("5m") == MARKER and cache_marker("weird") == MARKER and cache_marker(None) == MARKER
    out = anthropic_layout(payload("s", msgs(3)), ttl="1h")
    assert out["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert out["messages"][-1]["content"][0]["cache_control"]["ttl"] == "1h"
    default = anthropic_layout(payload("s", msgs(3)))
    assert "ttl" not in default["messages"][-1]["content"][0]["cache_control"]


def test_apply_cache_marker_rules() -> None:
    tool = {"role": "tool", "tool_call_id": "c", "content": "result"}
    assert apply_cache_marker(tool, MARKER, native=True)["cache_control"] == MARKER
    enveloped = apply_cache_marker(tool, MARKER, native=False)
    assert "cache_control" not in enveloped
    assert enveloped["content"] == [{"type": "text", "text": "result", "cache_control": MARKER}]
    assert apply_cache_marker({"role": "user", "content": "Hello"}, MARKER, True)["content"] == [
        {"type": "text", "text": "Hello", "cache_control": MARKER}
    ]
    two = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    out = apply_cache_marker(two, MARKER, True)
    assert "cache_control" not in out["content"][0] and out["content"][1]["cache_control"] == MARKER
    assert apply_cache_marker({"role": "user", "content": []}, MARKER, True)["content"] == []


@pytest.mark.parametrize("content", ["", None])
def test_empty_assistant_content(content: Any) -> None:
    message = {"role": "assistant", "content": content}
    assert apply_cache_marker(message, MARKER, native=True)["cache_control"] == MARKER
    assert "cache_control" not in apply_cache_marker(message, MARKER, native=False)


@pytest.mark.parametrize(
    "message,expected",
    [
        ({"role": "assistant", "content": ""}, False),
        ({"role": "assistant", "content": None}, False),
        ({"role": "tool", "content": "text"}, True),
        ({"role": "tool", "content": ""}, False),
        ({"role": "user", "content": [{"type": "text", "text": "x"}, "raw"]}, False),
        ({"role": "user", "content": []}, False),
        ({"role": "user", "content": [{"type": "text", "text": "x"}]}, True),
    ],
)
def test_can_carry_marker(message: dict[str, Any], expected: bool) -> None:
    assert can_carry_marker(message, native=True)
    assert can_carry_marker(message, native=False) is expected


def test_pure_copy_on_write() -> None:
    source = msgs(8)
    before = copy.deepcopy(source)
    out = anthropic_layout(payload("s", source))
    assert source == before
    for index in range(5):
        assert out["messages"][index] is source[index]  # unmarked: the same objects
    for index in range(5, 8):
        assert out["messages"][index] is not source[index]  # marked: copies


@pytest.mark.parametrize(("provider", "model"), [("anthropic", ""), ("openrouter", "anthropic/claude-sonnet-4")])
def test_a_writable_messages_list_is_marked_in_place(provider: str, model: str) -> None:
    source = msgs(8)
    messages = list(source)
    written = caching.hermes_payload_cache_layout(
        payload("s", messages), ctx(provider, model=model, messages_writable=True))
    copied = caching.hermes_payload_cache_layout(payload("s", list(source)), ctx(provider, model=model))
    assert written is not None and copied is not None
    assert written["messages"] is messages  # no copy of the history per request
    assert written == copied
    assert source == msgs(8)  # the messages themselves are never mutated
    plain = list(source)
    out = anthropic_layout(payload("s", plain))
    assert out["messages"] is not plain and plain == source  # by default: a copy


def test_a_split_system_marks_only_its_stable_first_block() -> None:
    system = [{"type": "text", "text": "stable prefix"}, {"type": "text", "text": "per-session context"}]
    out = anthropic_layout(payload(system, msgs(4)))  # type: ignore[arg-type]
    assert out["system"][0]["cache_control"] == MARKER and "cache_control" not in out["system"][1]
    assert "cache_control" not in system[0]
    assert count_markers(out) == 4


def test_the_layout_is_idempotent() -> None:
    once = anthropic_layout(payload("s", msgs(6)))
    assert json.dumps(anthropic_layout(once)) == json.dumps(once)


def test_system_messages_inside_the_history_are_not_marked() -> None:
    history = [*msgs(2), {"role": "system", "content": "note"}, *msgs(2)]
    out = anthropic_layout(payload("s", history))
    assert not marked(out["messages"][2])
    assert [marked(m) for m in out["messages"]] == [False, True, False, True, True]


# --- TTL ordering ---------------------------------------------------------------------------


def test_one_hour_system_before_five_minute_messages() -> None:
    out = anthropic_layout(payload("s", msgs(4)), ttl="5m", system_ttl="1h")
    assert out["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert all(m["content"][0]["cache_control"] == MARKER for m in out["messages"][1:])


def test_a_message_breakpoint_never_outlives_the_system_one() -> None:
    out = anthropic_layout(payload("s", msgs(4)), ttl="1h", system_ttl="5m")
    ttls = [out["system"][0]["cache_control"].get("ttl")] + [
        m["content"][0]["cache_control"].get("ttl") for m in out["messages"][1:]
    ]
    assert ttls == [None, None, None, None]  # clamped to 5m: 1h may not follow 5m


# --- the lookback guard ---------------------------------------------------------------------


def parallel_turn(calls: int) -> list[dict[str, Any]]:
    history = [{"role": "user", "content": "start"}, {"role": "assistant", "content": "ok"},
               {"role": "user", "content": "run everything"}]
    history.append({"role": "assistant", "content": "", "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "t", "arguments": "{}"}} for i in range(calls)
    ]})
    history += [{"role": "tool", "tool_call_id": f"c{i}", "content": f"r{i}"} for i in range(calls)]
    return history


def test_previous_request_end() -> None:
    history = parallel_turn(3)
    assert previous_request_end(history) == 2  # "run everything": the request before the batch
    assert previous_request_end(msgs(3)) == 0
    assert previous_request_end(msgs(1)) == -1


def test_block_count_matches_the_wire_blocks() -> None:
    history = parallel_turn(12)
    assert block_count(history[3]) == 12
    assert block_count(history[4]) == 1
    assert block_count({"role": "assistant", "content": "t", "tool_calls": [{}, {}]}) == 3


def test_a_short_turn_keeps_the_last_three() -> None:
    history = parallel_turn(3)
    assert choose_breakpoints(history, 3) == [len(history) - 3, len(history) - 2, len(history) - 1]


def test_twelve_parallel_calls_keep_a_breakpoint_on_the_previous_request() -> None:
    history = parallel_turn(12)
    chosen = choose_breakpoints(history, 3)
    # 12 tool_use blocks + 10 results separate the previous request's last message from the
    # earliest of the last three: beyond the lookback, so that breakpoint moves back.
    assert 12 + 10 >= LOOKBACK_BLOCKS
    assert chosen == [2, len(history) - 2, len(history) - 1]
    out = anthropic_layout(payload("s", history))
    assert marked(out["messages"][2]) and count_markers(out) == 4


# --- the hook -------------------------------------------------------------------------------


def ctx(provider: str, **kw: Any) -> PayloadContext:
    return PayloadContext(provider=provider, **kw)


def test_hook_marks_anthropic_with_the_context_ttl() -> None:
    out = caching.hermes_payload_cache_layout(payload("s", msgs(3)), ctx("anthropic", cache_ttl="1h"))
    assert out is not None and out["system"][0]["cache_control"]["ttl"] == "1h"
    assert "prompt_cache_key" not in out


def test_openai_gets_a_stable_key_and_no_markers() -> None:
    p = payload("s", msgs(3))
    one = caching.hermes_payload_cache_layout(p, ctx("openai", session_id="a"))
    again = caching.hermes_payload_cache_layout(p, ctx("openai", session_id="a"))
    other = caching.hermes_payload_cache_layout(p, ctx("openai", session_id="b"))
    assert one is not None and again is not None and other is not None
    assert count_markers(one) == 0 and one["system"] == "s"
    assert one["prompt_cache_key"] == again["prompt_cache_key"] != other["prompt_cache_key"]
    assert len(one["prompt_cache_key"]) <= 64
    assert "prompt_cache_key" not in p


def test_prompt_cache_key_can_be_switched_off() -> None:
    config = Config().with_sections(PromptCachingSettings(prompt_cache_key=False))
    out = caching.hermes_payload_cache_layout(payload("s", msgs(2)), ctx("openai", session_id="a", config=config))
    assert out is not None and "prompt_cache_key" not in out


def test_openrouter_to_claude_gets_envelope_breakpoints() -> None:
    history = [*msgs(2), {"role": "tool", "tool_call_id": "c", "content": "result"}]
    out = caching.hermes_payload_cache_layout(payload("s", history), ctx("openrouter", model="anthropic/claude-sonnet-4",
                                                                        session_id="x"))
    assert out is not None and out["prompt_cache_key"]
    assert out["messages"][-1]["content"][0]["cache_control"] == MARKER  # wrapped, not top-level
    assert "cache_control" not in out["messages"][-1]
    plain = caching.hermes_payload_cache_layout(payload("s", history), ctx("openrouter", model="openai/gpt-4o"))
    assert plain is not None and count_markers(plain) == 0


def test_unknown_providers_are_left_to_other_plugins(plugin_host: PluginHost) -> None:
    assert caching.hermes_payload_cache_layout(payload("s", msgs(2)), ctx("gemini")) is None
    p = assemble_payload("s", msgs(2), provider="gemini")
    assert plugin_host.payload_cache_layout(p, ctx("gemini")) is p


class GeminiLayout:
    """A third-party provider plugin: answers for its provider only."""

    @hookimpl
    def hermes_payload_cache_layout(self, payload: dict[str, Any], ctx: PayloadContext) -> dict[str, Any] | None:
        if ctx.provider != "gemini":
            return None
        return {**payload, "cached_content": "cachedContents/abc"}


class AnthropicOverride:
    @hookimpl
    def hermes_payload_cache_layout(self, payload: dict[str, Any], ctx: PayloadContext) -> dict[str, Any] | None:
        return {**payload, "layout": "mine"} if ctx.provider == "anthropic" else None


def test_a_third_party_layout_wins_for_its_provider(plugin_host: PluginHost, register_plugin: Any) -> None:
    register_plugin(GeminiLayout(), "gemini_layout")
    p = assemble_payload("s", msgs(3))
    gemini = plugin_host.payload_cache_layout(p, ctx("gemini"))
    assert gemini["cached_content"] == "cachedContents/abc"
    anthropic = plugin_host.payload_cache_layout(p, ctx("anthropic"))
    assert "cached_content" not in anthropic and count_markers(anthropic) == 4


def test_a_third_party_replaces_the_builtin_without_tryfirst(plugin_host: PluginHost, register_plugin: Any) -> None:
    register_plugin(AnthropicOverride(), "override")
    out = plugin_host.payload_cache_layout(assemble_payload("s", msgs(3)), ctx("anthropic"))
    assert out["layout"] == "mine" and count_markers(out) == 0


def test_blocking_the_plugin_removes_the_layout() -> None:
    host = PluginHost.create(only=(), blocked=["caching"])
    p = assemble_payload("s", msgs(3))
    assert host.payload_cache_layout(p, ctx("anthropic")) is p


# --- the stable/dynamic system split ---------------------------------------------------------

STABLE = "You are Hermes.\n\nGuidance that never changes."


def test_a_known_static_prefix_splits_the_system_into_two_marked_blocks() -> None:
    system = STABLE + "\n\nMemory: the user likes uv."
    out = anthropic_layout(payload(system, msgs(6)), static_prefix=STABLE)
    assert [b["text"] for b in out["system"]] == [STABLE + "\n\n", "Memory: the user likes uv."]
    assert "".join(b["text"] for b in out["system"]) == system  # nothing lost at the join
    assert all(b["cache_control"] == MARKER for b in out["system"])
    assert sum(marked(m) for m in out["messages"]) == 2  # two breakpoints left for messages
    assert count_markers(out) == 4
    assert json.dumps(anthropic_layout(out, static_prefix=STABLE)) == json.dumps(out)  # idempotent


@pytest.mark.parametrize(
    ("system", "prefix"),
    [
        (STABLE, STABLE),  # nothing after the prefix: one block
        (STABLE + "\n\n   \n", STABLE),  # only whitespace after it: never a blank block
        ("Another prompt entirely.", STABLE),  # not a prefix of this system
        (STABLE + "\n\nMemory.", ""),  # no prefix known
        (STABLE + "\n\nMemory.", "  \n"),  # a blank prefix
    ],
)
def test_the_system_stays_one_block_when_the_split_does_not_apply(system: str, prefix: str) -> None:
    out = anthropic_layout(payload(system, msgs(6)), static_prefix=prefix)
    assert len(out["system"]) == 1 and out["system"][0]["cache_control"] == MARKER
    assert sum(marked(m) for m in out["messages"]) == 3


def test_both_system_blocks_take_the_system_ttl() -> None:
    out = anthropic_layout(payload(STABLE + "\n\nMemory.", msgs(6)), ttl="5m", system_ttl="1h", static_prefix=STABLE)
    assert [b["cache_control"].get("ttl") for b in out["system"]] == ["1h", "1h"]


def test_the_hook_splits_with_the_contexts_prefix() -> None:
    ctx = PayloadContext(provider="anthropic", static_system_prefix=STABLE)
    out = caching.hermes_payload_cache_layout(payload(STABLE + "\n\nMemory.", msgs(4)), ctx)
    assert out is not None and len(out["system"]) == 2

"""Phase 1, the free passes (§7.1): dedupe, demote, screenshots, arguments, tail pressure."""

from __future__ import annotations

import json

from hermes_plugins.compressor.prune import (
    SCREENSHOT_PLACEHOLDER,
    TRUNCATED_SUFFIX,
    message_tokens,
    protected_tail_start,
    prune_tool_results,
    shorten_arguments,
)

from compressor_support import (
    assistant,
    call,
    image_part,
    snapshot,
    system,
    tool,
    user,
)


def test_nothing_to_do_returns_the_same_list() -> None:
    messages = [system(), user("hi"), assistant("hello")]
    out, stats = prune_tool_results(messages, protect_tail_count=2)
    assert out is messages
    assert stats.changed == 0


def test_duplicates_point_at_the_newest_copy_even_in_the_tail() -> None:
    body = "same output\n" * 50
    messages = [
        user("go"),
        assistant("", call("a", "terminal", command="make")), tool("a", body),
        assistant("", call("b", "terminal", command="make")), tool("b", body),
        assistant("", call("c", "terminal", command="make")), tool("c", body),
        assistant("done"),
    ]
    before = snapshot(messages)
    out, stats = prune_tool_results(messages, protect_tail_count=100)
    assert snapshot(messages) == before
    assert stats.deduplicated == 2
    assert out[6]["content"] == body
    assert "of call c" in out[2]["content"] and "of call c" in out[4]["content"]
    assert out[2] is not messages[2] and out[6] is messages[6]


def test_equal_length_but_different_results_are_not_duplicates() -> None:
    messages = [
        user("go"),
        assistant("", call("a")), tool("a", "a" * 300),
        assistant("", call("b")), tool("b", "b" * 300),
    ]
    out, stats = prune_tool_results(messages, protect_tail_count=100)
    assert stats.deduplicated == 0 and out is messages


def test_old_results_become_one_liners_and_the_tail_is_kept() -> None:
    messages = [user("go")]
    for i in range(6):
        messages += [assistant("", call(f"c{i}", "read_file", path=f"f{i}.py")), tool(f"c{i}", f"{i}" * 1_000)]
    messages.append(assistant("done"))
    out, stats = prune_tool_results(messages, protect_tail_count=4)
    assert stats.demoted == 4
    assert out[2]["content"] == "[read_file] read f0.py from line 1 (1,000 chars)"
    assert out[-2] is messages[-2] and out[-4] is messages[-4]


def test_short_and_already_demoted_results_stay() -> None:
    line = "[read_file] read x.py from line 1 (5,000 chars)"
    messages = [user("go"), assistant("", call("a"), call("b")), tool("a", "short"), tool("b", line), user("x")]
    out, stats = prune_tool_results(messages, protect_tail_count=1)
    assert out is messages and stats.demoted == 0


def test_screenshots_become_placeholders() -> None:
    shot = [{"type": "text", "text": "page"}, image_part()]
    flagged = {"_multimodal": True, "text_summary": "a login form"}
    messages = [
        user("go"), assistant("", call("a", "browser_vision"), call("b", "browser_vision")),
        tool("a", shot), tool("b", flagged), user("next"),
    ]
    out, stats = prune_tool_results(messages, protect_tail_count=1)
    assert stats.media_stripped == 2
    assert out[2]["content"] == [{"type": "text", "text": "page"}, {"type": "text", "text": SCREENSHOT_PLACEHOLDER}]
    assert out[3]["content"] == "[screenshot removed] a login form"
    assert messages[2]["content"][1]["type"] == "image_url"


def test_long_arguments_shrink_but_stay_valid_json() -> None:
    big = {"path": "notes.md", "content": "é" * 5_000, "nested": {"list": ["z" * 300, 3, None]}}
    bad = "{" + "x" * 900
    messages = [
        user("go"),
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(big, ensure_ascii=False)}},
            {"id": "b", "type": "function", "function": {"name": "write_file", "arguments": bad}},
        ]},
        tool("a", "ok"), tool("b", "ok"), user("next"),
    ]
    out, stats = prune_tool_results(messages, protect_tail_count=1)
    assert stats.arguments_shortened == 1
    new_args = out[1]["tool_calls"][0]["function"]["arguments"]
    parsed = json.loads(new_args)
    assert parsed["path"] == "notes.md"
    assert parsed["content"] == "é" * 200 + TRUNCATED_SUFFIX
    assert parsed["nested"]["list"] == ["z" * 200 + TRUNCATED_SUFFIX, 3, None]
    assert out[1]["tool_calls"][1]["function"]["arguments"] == bad
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"])["content"] == "é" * 5_000


def test_shorten_arguments_edge_cases() -> None:
    assert shorten_arguments("not json") is None
    assert shorten_arguments(json.dumps({"a": "short"})) is None
    assert shorten_arguments("[" * 100_000 + "]" * 100_000) is None


def test_tail_protection_by_tokens_with_a_message_floor() -> None:
    messages = [user("x" * 4_000) for _ in range(20)]
    per = message_tokens(messages[0])
    # Budget for ~3 messages, but the floor (min(protect_last_n, 8)) protects 8, and the
    # message whose addition overflows still counts as protected.
    assert protected_tail_start(messages, 20, per * 3) == 20 - 9
    # A big budget protects more than the floor; the overflowing message still counts.
    assert protected_tail_start(messages, 4, per * 10 + 1) == 20 - 11
    assert protected_tail_start(messages, 5, None) == 15


def test_pressure_pass_demotes_inside_an_oversized_tail() -> None:
    messages = [user("go")]
    for i in range(4):
        messages += [assistant("", call(f"c{i}", "read_file", path=f"f{i}.py")), tool(f"c{i}", f"{i}" * 40_000)]
    messages.append(assistant("done"))
    # Everything is protected by count (floor 8 of 10), but the tail is far over 1.5x budget.
    out, stats = prune_tool_results(messages, protect_tail_count=20, protect_tail_tokens=2_000)
    assert stats.demoted >= 3
    total = sum(message_tokens(m) for m in out)
    assert total < sum(message_tokens(m) for m in messages) / 4


def test_pressure_pass_spares_recent_messages_while_enough() -> None:
    messages = [user("go")]
    for i in range(6):
        messages += [assistant("", call(f"c{i}")), tool(f"c{i}", "q" * 8_000)]
    messages.append(assistant("done"))
    out, _ = prune_tool_results(messages, protect_tail_count=20, protect_tail_tokens=6_000)
    assert out[-2] is messages[-2]  # the most recent result survives
    assert out[2] is not messages[2]


def test_many_results_of_one_length_switch_to_xxh3_digests(monkeypatch) -> None:
    from hermes_plugins.compressor import prune

    hashed: list[int] = []
    real = prune._digest
    monkeypatch.setattr(prune, "_digest", lambda text: hashed.append(len(text)) or real(text))
    messages = [user("go")]
    bodies = [f"{i:04d}" + "z" * 396 for i in range(8)]  # eight distinct results, all 400 chars
    for i, body in enumerate(bodies + bodies[:3]):  # then three repeats
        messages += [assistant("", call(f"c{i}")), tool(f"c{i}", body)]
    out, stats = prune_tool_results(messages, protect_tail_count=100)
    assert stats.deduplicated == 3
    assert hashed, "a crowded length is told apart by digests"
    assert [m["content"].startswith("[duplicate") for m in out if m["role"] == "tool"] == [True] * 3 + [False] * 8
    assert "of call c8" in out[2]["content"]

"""The OpenAI Chat ``messages`` of a request: one list made for the host, the system message
first, the images moved out of tool results right after their results - from the session's
message cache (a turn after the first) exactly as from scratch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_core.wire import to_openai

from fidelity_fixtures import PNG_B64, open_session

IMAGE = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}


def history() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "look at the two screenshots"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": "shot", "arguments": "{}"}}
            for i in (1, 2)]},
        {"role": "tool", "tool_call_id": "call_1", "content": "no screen"},
        {"role": "tool", "tool_call_id": "call_2", "content": [{"type": "text", "text": "the screen"}, IMAGE]},
        {"role": "assistant", "content": "The second one shows the error."},
        {"role": "user", "content": "fix it"},
    ]


def check_layout(sent: list[dict[str, Any]]) -> None:
    assert sent[0]["role"] == "system" and sent[0]["content"]
    roles = [m["role"] for m in sent]
    last_tool = max(i for i, role in enumerate(roles) if role == "tool")
    moved = sent[last_tool + 1]
    assert moved["role"] == "user" and moved["content"][1:] == [
        {"type": "text", "text": "[image from the result of call_2]"}, IMAGE]
    assert roles == ["system", "user", "assistant", "tool", "tool", "user", "assistant", "user",
                     *roles[8:]]


def test_system_first_and_moved_images_after_their_results_on_every_turn(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    messages = history()
    for step in range(3):
        sent = session.request(messages)["messages"]
        check_layout(sent)
        assert sent == to_openai(session.payload(messages))["messages"]  # as from scratch
        messages = [*messages, {"role": "assistant", "content": f"step {step}"},
                    {"role": "user", "content": f"and then {step}"}]


def test_the_host_may_change_the_list_it_was_given(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    messages = history()
    first = session.request(messages)["messages"]
    expected = [dict(m) for m in first]
    first.insert(0, {"role": "user", "content": "smuggled"})
    first[3] = {"role": "user", "content": "overwritten"}
    first.append({"role": "user", "content": "appended"})
    again = session.request(messages)["messages"]
    assert again is not first and again == expected
    check_layout(again)

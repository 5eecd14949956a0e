"""A host's malformed message is an InvalidMessagesError naming it, on every request path - never a
request the provider refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import InvalidMessagesError, Session

GOOD: list[dict[str, Any]] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
BAD = {
    "a number for content": ({"role": "user", "content": 5}, "content must be a string, a list or null"),
    "a boolean for content": ({"role": "assistant", "content": True}, "content must be a string, a list or null"),
    "tool_calls not a list": ({"role": "assistant", "content": None, "tool_calls": {"id": "c"}},
                              "tool_calls must be a list, got dict"),
    "a tool call not an object": ({"role": "assistant", "content": None, "tool_calls": ["c1"]},
                                  r"tool_calls\[0\] must be an object"),
}
# A missing or unknown role is not an error: it goes as user text, counted
# (tests/fidelity/test_qa_wire_rules.py).


def _session(tmp_path: Path) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, model="gpt-4o", provider="openai", persist=False, env={})


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("call", ["before_request", "request", "payload"])
def test_a_malformed_message_is_named_by_its_index(tmp_path: Path, case: str, call: str) -> None:
    session = _session(tmp_path)
    message, why = BAD[case]
    with pytest.raises(InvalidMessagesError, match=f"message 2: {why}") as raised:
        getattr(session, call)([*GOOD, message])
    assert raised.value.index == 2


def test_a_malformed_message_after_synced_turns_is_named_by_its_index_in_the_whole_list(tmp_path: Path) -> None:
    # A turn looks at the new messages only; the index is still the host's.
    session = _session(tmp_path)
    history = [*GOOD]
    for turn in range(3):
        history += [{"role": "user", "content": f"q{turn}"}, {"role": "assistant", "content": f"a{turn}"}]
        session.request(history)
    with pytest.raises(InvalidMessagesError, match=f"message {len(history)}: content must be"):
        session.request([*history, {"role": "user", "content": 3.5}])
    assert session.request([*history, {"role": "user", "content": "fine again"}])["messages"]


@pytest.mark.parametrize("content", [5, 2.5, True])
def test_a_forced_compress_refuses_a_number_for_content_by_index(tmp_path: Path, content: Any) -> None:
    session = _session(tmp_path)
    history = [*GOOD, *({"role": "user", "content": f"q{i}"} for i in range(8)), {"role": "user", "content": content}]
    with pytest.raises(InvalidMessagesError, match=f"message {len(history) - 1}: content must be") as raised:
        session.compress(history, force=True)
    assert raised.value.index == len(history) - 1

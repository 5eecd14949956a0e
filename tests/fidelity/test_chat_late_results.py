"""Parallel tool calls whose results arrive out of order, after another message, or after their
call was compacted away: what reaches each provider is valid, a result is never lost unsaid, and
nothing claims a call was never made or that no result came back (it may be compacted, it may
come later: only where a result or call is not can be checked).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import open_session

FALSE_CLAIMS = ("no result came back", "answered no call")


def _call(ident: str) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": "fetch", "arguments": json.dumps({"id": ident})}}


def _result(ident: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": ident, "content": text}


def _check_all(session: Any, messages: list[dict[str, Any]]) -> None:
    validators_openai_chat.check(session.request(messages, provider="openai"))
    validators_anthropic.check(session.request(messages, provider="anthropic"))
    validators_openai_responses.check(session.request(messages, provider="openai", api="responses"))


def _repairs(session: Any) -> list[str]:
    return [w.message for w in session.warnings if w.kind == "tool_pairs_repaired"]


def test_results_out_of_order_go_as_they_came(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    history = [{"role": "user", "content": "Fetch three."},
               {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2"), _call("c3")]},
               _result("c3", "three"), _result("c1", "one"), _result("c2", "two"),
               {"role": "user", "content": "Compare them."}]
    messages = session.before_request(copy.deepcopy(history))
    assert messages == history and not _repairs(session)
    _check_all(session, messages)
    anthropic = session.request(messages, provider="anthropic")
    results = [b["tool_use_id"] for m in anthropic["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert results == ["c3", "c1", "c2"]


def test_a_result_after_a_later_message_is_moved_back_to_its_call(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    history = [{"role": "user", "content": "Fetch two."},
               {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
               _result("c1", "one"), {"role": "user", "content": "Any news?"}, _result("c2", "two, late")]
    messages = session.before_request(copy.deepcopy(history))
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["c1", "c2"]
    assert messages[3] == _result("c2", "two, late") and messages[4]["content"] == "Any news?"
    assert "moved back" in _repairs(session)[0]
    _check_all(session, messages)


def test_a_late_result_the_host_can_no_longer_pair_is_said_and_not_called_an_orphan(tmp_path: Path) -> None:
    """The host continued with the repaired list (c2 had no result before the user's next
    message), then c2's result came: it cannot go (its call is not in the list), and the host
    hears about it - before, this second repair was only logged."""
    session = open_session(tmp_path, provider="openai")
    history = [{"role": "user", "content": "Fetch two."},
               {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
               _result("c1", "one"), {"role": "user", "content": "Any news?"}]
    sent = session.before_request(history)
    first = _repairs(session)
    assert len(first) == 1 and "1 tool call(s) dropped" in first[0]
    sent = session.before_request([*sent, _result("c2", "two, late")])
    second = _repairs(session)
    assert len(second) == 1 and "1 tool result(s) dropped" in second[0]
    text = json.dumps(sent) + first[0] + second[0]
    assert not any(claim in text for claim in FALSE_CLAIMS), text
    _check_all(session, sent)


def test_a_result_of_a_compacted_call_is_not_called_an_orphan(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai", context_length=6_000)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Fetch them all."}]
    for n in range(12):
        history += [{"role": "assistant", "content": None, "tool_calls": [_call(f"k{n}")]},
                    _result(f"k{n}", f"item {n}: " + "data " * 300)]
    history.append({"role": "user", "content": "Next batch."})
    compacted = session.compress(history).messages
    gone = {f"k{n}" for n in range(12)} - {c["id"] for m in compacted for c in m.get("tool_calls") or ()}
    assert gone
    late = sorted(gone)[0]
    sent = session.before_request([*compacted, _result(late, "a late answer")])
    said = _repairs(session)
    assert len(said) == 1 and "1 tool result(s) dropped" in said[0]
    assert not any(claim in json.dumps(sent) + said[0] for claim in FALSE_CLAIMS)
    _check_all(session, sent)

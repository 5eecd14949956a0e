"""A server tool's call and its result stay together (in one assistant message, or in the two
messages of a turn the API paused and continued) through the pairing check and every
compaction; no server call is treated as a client call needing a ``tool_result``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.pairing import TOOL_CALL_REMOVED, pairing_problems

import validators_anthropic
import validators_openai_chat
from fidelity_fixtures import WEB_SEARCH_RESULT, WEB_SEARCH_USE, open_session, server_tool_history


def _paused_history(rounds: int, before: int, after: int) -> list[dict[str, Any]]:
    """Turns the API paused (``pause_turn``) right after a web search call and continued in a
    second reply that opens with the search's result, as a host appends them."""
    history: list[dict[str, Any]] = []
    for i in range(rounds):
        history.append({"role": "user", "content": f"question {i} " + "pad " * 200})
        history.append({"role": "assistant", "content": [
            {"type": "text", "text": f"Searching {i}. " + "note " * before},
            {**WEB_SEARCH_USE, "id": f"srvtoolu_{i:02d}"}]})
        history.append({"role": "assistant", "content": [
            {**WEB_SEARCH_RESULT, "tool_use_id": f"srvtoolu_{i:02d}"},
            {"type": "text", "text": f"Answer {i}. " + "word " * after}]})
    return history


def test_server_and_mcp_calls_need_no_client_result(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    history = server_tool_history()
    messages = session.before_request(history)
    assert pairing_problems(messages) == []
    assert not [w for w in session.warnings if w.kind == "tool_pairs_repaired"]
    # every server call is in no message's tool_calls: nothing waits for a tool message
    calls = [c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()]
    assert calls == ["read_file", "read_log"]
    request = session.request(messages)
    validators_anthropic.check(request, thinking=True)
    dumped = json.dumps(request)
    assert TOOL_CALL_REMOVED not in dumped and "no result came back" not in dumped
    assert dumped.count('"tool_result"') == 2


def test_a_paused_turn_goes_back_as_it_came(tmp_path: Path) -> None:
    history = _paused_history(1, 0, 0)[:2]  # the reply that paused is the last message
    session = open_session(tmp_path)
    messages = session.before_request(history)
    assert pairing_problems(messages) == []
    request = session.request(messages)
    validators_anthropic.check(request)
    last = request["messages"][-1]["content"][-1]
    assert {k: v for k, v in last.items() if k != "cache_control"} == {**WEB_SEARCH_USE, "id": "srvtoolu_00"}
    # and continued: the two replies are one assistant turn on the wire
    full = session.request(_paused_history(1, 0, 0))
    validators_anthropic.check(full)
    assert [b["type"] for b in full["messages"][1]["content"]] == [
        "text", "server_tool_use", "web_search_tool_result", "text"]


@pytest.mark.parametrize(("before", "after", "window"), [
    (2000, 2000, 16_000),  # the cut keeps the reply the newest request answers: its whole turn
    (2000, 500, 24_000),   # the tail's budget ends inside a continued turn
    (2000, 500, 32_000),   # the summary would merge into the reply that made the call
])
def test_compaction_never_splits_a_continued_turn(tmp_path: Path, before: int, after: int,
                                                  window: int) -> None:
    session = open_session(tmp_path, context_length=window)
    history = _paused_history(6, before, after)
    result = session.compress(session.before_request(history))
    assert len(result.messages) < len(history)
    request = session.request(result.messages)
    validators_anthropic.check(request)
    assert pairing_problems(result.messages) == []
    validators_openai_chat.check(session.request(result.messages, provider="openai"))


def test_a_forced_compaction_keeps_every_server_pair_whole(tmp_path: Path) -> None:
    history = []
    for i in range(5):
        turn = json.loads(json.dumps(server_tool_history()).replace("srvtoolu_0", f"srvtoolu_{i}")
                          .replace("toolu_1", f"toolu_{i}1").replace("mcptoolu_01", f"mcptoolu_{i}"))
        turn[2]["content"] += " filler" * 800
        history.extend(turn)
    session = open_session(tmp_path, context_length=12_000)
    result = session.compress(session.before_request(history))
    assert len(result.messages) < len(history)
    request = session.request(result.messages)
    validators_anthropic.check(request, thinking=True)
    kept = [b for m in request["messages"] if m["role"] == "assistant" for b in m["content"]]
    assert any(b["type"] == "mcp_tool_result" for b in kept)  # the tail kept a server turn, whole
    report = session.last_request_report
    assert report is not None and report.lossless, report.describe()
    assert not [w for w in session.warnings if w.kind == "tool_pairs_repaired"]

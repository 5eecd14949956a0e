"""Deprecated OpenAI function calling (an assistant's ``function_call``, a ``role: "function"``
result): converted where it enters into the tool-call form every pass and provider shares,
meaning for meaning, and counted in every request's report.

Before, OpenAI Chat got the result as the user's own words, Anthropic lost the call (an
"empty" assistant message dropped) and got the result as user text too, and a compaction could
separate the two (no pass saw them as a pair).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hermes_core.messages import LEGACY_FUNCTION

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import open_session

NOTE = "deprecated function call or result -> tool call or result"


def _round(city: str, result: str) -> list[dict[str, Any]]:
    return [
        {"role": "assistant", "content": None,
         "function_call": {"name": "get_weather", "arguments": json.dumps({"city": city})}},
        {"role": "function", "name": "get_weather", "content": result},
    ]


def _history() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Weather in Oslo and Bergen?"},
            *_round("Oslo", "12C, rain"), *_round("Bergen", "9C, wind"),
            {"role": "assistant", "content": "Oslo 12C with rain, Bergen 9C with wind."},
            {"role": "user", "content": "Thanks."}]


def _check_all(session: Any, messages: list[dict[str, Any]]) -> dict[str, Any]:
    chat = session.request(messages, provider="openai")
    validators_openai_chat.check(chat)
    anthropic = session.request(messages, provider="anthropic")
    validators_anthropic.check(anthropic)
    validators_openai_responses.check(session.request(messages, provider="openai", api="responses"))
    return {"openai": chat, "anthropic": anthropic}


def test_calls_and_results_become_tool_calls_and_results_for_every_target(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    history = _history()
    messages = session.before_request(copy.deepcopy(history))
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    calls = [m["tool_calls"][0] for m in messages if m.get("tool_calls")]
    assert [c["function"] for c in calls] == [r["function_call"] for r in history if "function_call" in r]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == [c["id"] for c in calls]
    assert len({c["id"] for c in calls}) == 2  # two calls, two ids
    assert [m["content"] for m in messages if m["role"] == "tool"] == ["12C, rain", "9C, wind"]

    out = _check_all(session, messages)
    chat = out["openai"]["messages"]
    assert [m["content"] for m in chat if m["role"] == "tool"] == ["12C, rain", "9C, wind"]
    assert not any(m["role"] == "user" and "12C" in str(m["content"]) for m in chat)  # not the user's words
    blocks = [b for m in out["anthropic"]["messages"] for b in m["content"]]
    uses = [b for b in blocks if b["type"] == "tool_use"]
    assert [(u["name"], u["input"]) for u in uses] == [("get_weather", {"city": "Oslo"}),
                                                       ("get_weather", {"city": "Bergen"})]
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    session.request(messages, provider="anthropic")
    report = session.last_request_report
    assert report is not None and report.converted.get(NOTE) == 4  # two calls, two results


def test_the_same_call_made_again_gets_another_id(tmp_path: Path) -> None:
    """OpenAI refuses a request with two calls of one id: the same function with the same
    arguments, called again (also after the same words), is told apart by what came before."""
    session = open_session(tmp_path, provider="openai")
    again = {"role": "user", "content": "Again."}
    history = [again, *_round("Oslo", "12C"), *_round("Oslo", "12C"),
               {"role": "assistant", "content": "12C."}, dict(again), *_round("Oslo", "12C"), dict(again)]
    messages = session.before_request(copy.deepcopy(history))
    assert [m["content"] for m in messages if m["role"] == "tool"] == ["12C"] * 3
    ids = [m["tool_calls"][0]["id"] for m in messages if m.get("tool_calls")]
    assert len(set(ids)) == 3
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ids
    out = _check_all(session, messages)
    blocks = [b for m in out["anthropic"]["messages"] for b in m["content"]]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == [
        b["id"] for b in blocks if b["type"] == "tool_use"]
    assert session.before_request(copy.deepcopy(history)) == messages  # the same ids on every turn


def test_a_result_appended_on_a_later_turn_answers_its_call(tmp_path: Path) -> None:
    """The host appends the call, sends, then appends the result to its own list (kept in the
    legacy form) or to the list it got back (the call already converted)."""
    for adopt in (False, True):
        (tmp_path / str(adopt)).mkdir()
        session = open_session(tmp_path / str(adopt), provider="openai")
        history = [{"role": "user", "content": "Weather in Oslo?"}, _round("Oslo", "12C")[0]]
        sent = session.before_request(history)
        assert sent[-1]["tool_calls"][0]["function"]["name"] == "get_weather"  # in flight, kept
        history = list(sent) if adopt else history
        history.append(_round("Oslo", "12C")[1])
        sent = session.before_request(history)
        assert sent[-1] == {"role": "tool", "tool_call_id": sent[-2]["tool_calls"][0]["id"], "content": "12C",
                            LEGACY_FUNCTION: True}
        assert not [w for w in session.warnings if w.kind == "tool_pairs_repaired"]
        _check_all(session, sent + [{"role": "user", "content": "And tomorrow?"}])


def test_a_forced_compaction_keeps_each_call_with_its_result(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai", context_length=6_000)
    history: list[dict[str, Any]] = [{"role": "user", "content": "Weather everywhere."}]
    for n in range(14):
        history += _round(f"city {n}", f"reading {n}: " + "cloudy " * 120)
    history.append({"role": "user", "content": "Which was warmest?"})
    messages = session.compress(copy.deepcopy(history)).messages
    assert len(messages) < len(history)
    assert not any(m.get("role") == "function" or m.get("function_call") for m in messages)
    calls = {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    assert {m["tool_call_id"] for m in messages if m["role"] == "tool"} <= calls
    _check_all(session, messages)
    assert messages[-1] == history[-1]


def test_an_sdk_dump_with_null_function_call_is_left_as_it_is(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    history = [{"role": "user", "content": "hi"},
               {"role": "assistant", "content": "hello", "refusal": None, "annotations": [], "audio": None,
                "function_call": None, "tool_calls": None},
               {"role": "user", "content": "bye"}]
    messages = session.before_request(history)
    assert messages[1] is history[1]
    validators_openai_chat.check(session.request(messages))

"""Anthropic Messages, exactly (issue 28): signed thinking, is_error, media blocks and the
host's own cache markers reach an Anthropic request as Anthropic defines them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core import bounded
from hermes_core.sdk import normalize_messages

import validators_anthropic
from fidelity_fixtures import (
    DOCUMENT,
    IMAGE,
    REDACTED,
    SEARCH,
    THINK_1,
    THINK_2,
    URL_IMAGE,
    anthropic_history,
    open_session,
)


def _blocks(request: dict[str, Any], role: str) -> list[list[dict[str, Any]]]:
    return [m["content"] for m in request["messages"] if m["role"] == role]


def _without_markers(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def test_thinking_blocks_go_back_byte_identical_in_their_order(tmp_path: Path) -> None:
    history = anthropic_history()
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    turns = _blocks(request, "assistant")
    originals = [m["content"] for m in history if m["role"] == "assistant"]
    assert len(turns) == len(originals) == 2
    for sent, original in zip(turns, originals):
        # every block in its place; thinking byte for byte (the layout may mark a later block)
        assert [json.dumps(_without_markers(b), sort_keys=True) for b in sent] == [
            json.dumps(b, sort_keys=True) for b in original]
        for block in sent:
            if block["type"] in ("thinking", "redacted_thinking"):
                assert json.dumps(block) in (json.dumps(THINK_1), json.dumps(REDACTED), json.dumps(THINK_2))
    assert turns[0][:2] == [THINK_1, REDACTED] and turns[1][0] == THINK_2
    assert session.last_request_report is not None and session.last_request_report.lossless


def test_thinking_survives_the_whole_loop_through_before_and_after(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = session.before_request(anthropic_history())
    messages = session.after_response({"input_tokens": 1000}, messages)
    request = session.request(messages)
    validators_anthropic.check(request, thinking=True)
    assert _blocks(request, "assistant")[-1][0] == THINK_2


def test_is_error_reaches_the_tool_result(tmp_path: Path) -> None:
    request = open_session(tmp_path).request(anthropic_history())
    results = {b["tool_use_id"]: b for m in _blocks(request, "user") for b in m if b["type"] == "tool_result"}
    assert results["toolu_01"]["is_error"] is True
    assert "is_error" not in results["toolu_02"]


def test_images_documents_and_search_results_pass_unchanged(tmp_path: Path) -> None:
    request = open_session(tmp_path).request(anthropic_history())
    user = _blocks(request, "user")
    assert [_without_markers(b) for b in user[0][1:]] == [IMAGE, DOCUMENT]
    results = {b["tool_use_id"]: b for m in user for b in m if b["type"] == "tool_result"}
    assert results["toolu_02"]["content"][1] == IMAGE
    # the person's words after the results keep their order (image first, then the text), in
    # the same user message, after the results (roles alternate; results come first)
    assert [b["type"] for b in user[1]] == ["tool_result", "tool_result", "image", "text"]
    assert user[1][2] == URL_IMAGE
    assert [_without_markers(b) for b in results["toolu_03"]["content"]] == [SEARCH]


def test_a_rewritten_reply_loses_its_thinking_visibly_never_altered(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = normalize_messages(anthropic_history())
    first = next(i for i, m in enumerate(messages) if m["role"] == "assistant")
    messages[first] = {**messages[first], "content": "[condensed] read two files"}
    request = session.request(messages)
    sent = _blocks(request, "assistant")[0]
    assert all(b["type"] not in ("thinking", "redacted_thinking") for b in sent)
    assert sent[0]["text"] == "[condensed] read two files"
    report = session.last_request_report
    assert report is not None
    assert report.dropped == {"Anthropic blocks of a message rewritten since the reply": 2}
    assert any(w.kind == "request_content_converted" for w in session.warnings)
    assert _blocks(request, "assistant")[1][0] == THINK_2  # the latest turn is untouched


def test_the_hosts_own_cache_markers_are_kept_and_the_layout_gives_way(tmp_path: Path) -> None:
    history = anthropic_history()
    history[0]["content"][0]["cache_control"] = {"type": "ephemeral"}
    history.insert(1, {"role": "user", "content": [
        {"type": "text", "text": "Also the style guide.", "cache_control": {"type": "ephemeral", "ttl": "5m"}}]})
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    first = request["messages"][0]["content"]  # the two user messages, sent as one
    assert first[0]["cache_control"] == {"type": "ephemeral"}
    report = session.last_request_report
    assert report is not None
    assert (report.user_breakpoints, report.layout_breakpoints) == (2, 2)
    dumped = json.dumps(request)
    assert dumped.count("cache_control") == 4


def test_more_host_markers_than_the_api_takes_keep_the_latest_four(tmp_path: Path) -> None:
    history = [{"role": "user" if i % 2 == 0 else "assistant", "content": [
        {"type": "text", "text": f"turn {i}", "cache_control": {"type": "ephemeral"}}]} for i in range(7)]
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request)
    marked = [m["content"][0]["text"] for m in request["messages"] if "cache_control" in m["content"][0]]
    assert marked == ["turn 3", "turn 4", "turn 5", "turn 6"]
    report = session.last_request_report
    assert report is not None and report.layout_breakpoints == 0
    assert report.dropped == {"cache_control beyond the four Anthropic takes": 3}
    assert any(w.kind == "request_content_converted" for w in session.warnings)


def test_a_forced_compaction_never_rewrites_the_loop_in_progress(tmp_path: Path) -> None:
    # The head ends on a user turn and the tail starts with the reply that has signed thinking:
    # the summary would merge into that reply (rewriting it); it stands on its own instead.
    history = [
        {"role": "user", "content": [{"type": "text", "text": "Look."}, IMAGE]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "An old turn.", "signature": "sig-old"},
            {"type": "text", "text": "Earlier answer."}]},
        {"role": "user", "content": [{"type": "text", "text": "Now fix it."}, IMAGE]},
        {"role": "assistant", "content": [
            THINK_2, {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.py"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "alpha " * 5, "is_error": True},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "beta " * 5}]},
    ]
    session = open_session(tmp_path, context_length=6_000)
    result = session.compress(session.before_request(history))
    request = session.request(result.messages)
    validators_anthropic.check(request, thinking=True)
    last = [m["content"] for m in request["messages"] if m["role"] == "assistant"][-1]
    assert last[0] == THINK_2 and last[1] == {"type": "text", "text": "Reading."}
    report = session.last_request_report
    assert report is not None and report.dropped == {}


def test_a_hosts_marker_on_a_tool_result_stays_on_it(tmp_path: Path) -> None:
    history = anthropic_history()
    history[-1]["content"][0]["cache_control"] = {"type": "ephemeral"}
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    result = request["messages"][-1]["content"][0]
    assert result["type"] == "tool_result" and result["cache_control"] == {"type": "ephemeral"}
    report = session.last_request_report
    assert report is not None and report.user_breakpoints == 1 and report.layout_breakpoints == 3
    assert json.dumps(request).count("cache_control") == 4
    to_openai = session.request(history, provider="openai")
    assert "cache_control" not in json.dumps(to_openai)
    assert session.last_request_report.dropped == {"cache_control of a tool result": 1}  # type: ignore[union-attr]


def test_a_reply_with_a_tool_input_nested_too_deep_keeps_its_thinking(tmp_path: Path) -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(10_000):
        node["a"] = {}
        node = node["a"]
    history = [{"role": "user", "content": "go"},
               {"role": "assistant", "content": [THINK_1, {"type": "tool_use", "id": "toolu_1", "name": "x", "input": deep}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "done"}]}]
    session = open_session(tmp_path)
    request = session.request(session.before_request(history))
    validators_anthropic.check(request, thinking=True)
    sent = request["messages"][1]["content"]
    assert sent[0] == THINK_1
    assert sent[1]["input"] == json.loads(bounded.too_deep_note("tool-call arguments"))
    report = session.last_request_report
    assert report is not None and report.placeholders == {"tool input nested too deep": 1}
    json.dumps(request)  # what the SDK does with it


def test_a_hosts_marker_inside_a_reply_is_kept_and_counted(tmp_path: Path) -> None:
    history = anthropic_history()
    marked = {"type": "text", "text": "Reading the file and the log.", "cache_control": {"type": "ephemeral"}}
    history[1]["content"][2] = marked
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    assert request["messages"][1]["content"][2] == marked
    report = session.last_request_report
    assert report is not None and (report.user_breakpoints, report.layout_breakpoints) == (1, 3)

"""Anthropic's server-tool, MCP, citation and upload blocks through the public entry points:
sent back to Anthropic as they came, shown to OpenAI (Chat and Responses) as counted visible
placeholders where they stood, a cited sentence read as one text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.sdk import normalize_messages

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import (
    CITED_SPANS,
    COMPACTION,
    CONTAINER_UPLOAD,
    MCP_RESULT,
    MCP_USE,
    REDACTED,
    THINK_1,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
    open_session,
    server_tool_history,
)

SERVER_KINDS = ("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
                "code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
                "mcp_tool_result")


def _without_markers(blocks: Any) -> Any:
    if not isinstance(blocks, list):
        return blocks
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def _assistant_turns(request: Mapping[str, Any]) -> list[Any]:
    return [m["content"] for m in request["messages"] if m["role"] == "assistant"]


def test_every_server_block_goes_back_to_anthropic_as_it_came(tmp_path: Path) -> None:
    history = server_tool_history()
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request, thinking=True)
    sent = _assistant_turns(request)
    originals = [m["content"] for m in history if m["role"] == "assistant"]
    assert [_without_markers(s) for s in sent] == originals
    # byte for byte, key order included (what the SDK serialises is what came)
    assert [json.dumps(_without_markers(s)) for s in sent] == [json.dumps(o) for o in originals]
    first_user = request["messages"][0]["content"]
    assert CONTAINER_UPLOAD in _without_markers(first_user)
    report = session.last_request_report
    assert report is not None and report.lossless, report.describe()


def test_server_blocks_reach_openai_chat_as_placeholders_where_they_stood(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    request = session.request(server_tool_history(), provider="openai")
    validators_openai_chat.check(request)
    searched = _assistant_turns(request)[0]
    assert isinstance(searched, str)
    lines = searched.split("\n\n")
    assert lines[1:] == [
        "Searching the docs.",
        '[server_tool_use omitted: web_search, {"query":"request handler docs"}]',
        "[web_search_tool_result omitted: 2 results, https://docs.example.com/handlers, "
        "https://blog.example.com/b-py]",
        "According to the docs, handlers live in b.py.",
    ]
    tools_turn = _assistant_turns(request)[1]
    for expected in ("[bash_code_execution_tool_result omitted: bash_code_execution_result, return code 0, "
                     "stdout 3 characters]",
                     "[text_editor_code_execution_tool_result omitted: error unavailable]",
                     "[tool_search_tool_result omitted: tool_search_tool_search_result, tools get_weather]",
                     '[mcp_tool_use omitted: list_issues on MCP server tracker, {"state":"open"}]',
                     f"[mcp_tool_result omitted: {len(MCP_RESULT['content'][0]['text'])} characters]"):
        assert expected in tools_turn
    assert "ENCRYPTED" not in tools_turn and WEB_SEARCH_RESULT["content"][0]["encrypted_content"] not in searched
    report = session.last_request_report
    assert report is not None
    assert report.placeholders["server_tool_use"] == 6
    for kind in SERVER_KINDS[1:]:
        assert report.placeholders[kind] == 1, kind
    assert report.placeholders["container_upload"] == 1
    assert report.dropped["citations (text kept)"] == 2
    assert any(w.kind == "request_content_converted" for w in session.warnings)


def test_server_blocks_reach_the_responses_api_as_counted_placeholders(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    request = session.request(server_tool_history(), provider="openai", api="responses")
    validators_openai_responses.check(request)
    texts = [item["content"] for item in request["input"]
             if item.get("role") == "assistant" and isinstance(item.get("content"), str)]
    assert any("[web_search_tool_result omitted: 2 results" in t for t in texts)
    assert any("According to the docs, handlers live in b.py." in t for t in texts)
    # a text document and a search result read as Chat reads them, not as "[document omitted]"
    dumped = json.dumps(request["input"])
    assert "[document: notes.txt]\\n[context: the team's notes]\\nb.py holds the handler." in dumped
    assert "[search result: Handlers (https://docs.example.com/handlers)]" in dumped
    warning = next(w for w in session.warnings if w.kind == "responses_conversion")
    assert warning.details["placeholder_server_tool_use"] == 6
    assert warning.details["placeholder_web_search_tool_result"] == 1
    assert warning.details["placeholder_container_upload"] == 1
    assert warning.details["dropped_citations_text_kept"] == 2
    assert warning.details["reasoning_of_another_api_dropped"] == 3  # each thinking block, counted


def test_a_reply_of_redacted_thinking_is_counted_for_the_responses_api(tmp_path: Path) -> None:
    reply = {"role": "assistant", "content": [REDACTED, {"type": "text", "text": "Done."}]}
    session = open_session(tmp_path)
    request = session.request([{"role": "user", "content": "go"}, reply, {"role": "user", "content": "ok"}],
                              provider="openai", api="responses")
    validators_openai_responses.check(request)
    warning = next(w for w in session.warnings if w.kind == "responses_conversion")
    assert warning.details["reasoning_of_another_api_dropped"] == 1


def test_a_cited_sentence_reads_as_one_text() -> None:
    reply = {"role": "assistant", "content": [WEB_SEARCH_USE, WEB_SEARCH_RESULT, *CITED_SPANS]}
    [message] = normalize_messages([reply])
    assert message["content"] == "According to the docs, handlers live in b.py."
    assert message["_anthropic_content"] == reply["content"]


def test_a_reply_canonicalised_with_blank_lines_between_its_spans_still_goes_back(tmp_path: Path) -> None:
    # a history stored before cited spans were read as one text keeps its blocks valid
    blocks = [THINK_1, *CITED_SPANS]
    old_form = {"role": "assistant", "content": "\n\n".join(b["text"] for b in CITED_SPANS),
                "_anthropic_content": blocks}
    session = open_session(tmp_path)
    request = session.request([{"role": "user", "content": "where?"}, old_form])
    assert _without_markers(request["messages"][1]["content"]) == blocks
    assert session.last_request_report is not None and session.last_request_report.lossless


def test_an_mcp_turn_as_a_plain_dict_is_kept_whole(tmp_path: Path) -> None:
    # no thinking, no client tool_use: the blocks are still kept, not left as assistant parts
    reply = {"role": "assistant", "content": [MCP_USE, MCP_RESULT, {"type": "text", "text": "Two open."}]}
    [message] = normalize_messages([reply])
    assert message["content"] == "Two open." and "tool_calls" not in message
    session = open_session(tmp_path)
    history = [{"role": "user", "content": "issues?"}, reply, {"role": "user", "content": "thanks"}]
    request = session.request(history)
    validators_anthropic.check(request)
    assert _without_markers(request["messages"][1]["content"]) == reply["content"]


def test_a_compaction_block_goes_back_to_anthropic_and_reads_as_its_summary_elsewhere(tmp_path: Path) -> None:
    failed = {"type": "compaction", "content": None}
    reply = {"role": "assistant", "content": [COMPACTION, failed, {"type": "text", "text": "Carrying on."}]}
    history = [{"role": "user", "content": "go on"}, reply, {"role": "user", "content": "and?"}]
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request)
    assert _without_markers(request["messages"][1]["content"]) == reply["content"]
    chat = session.request(history, provider="openai")
    validators_openai_chat.check(chat)
    assert chat["messages"][2]["content"] == (
        "[earlier turns, condensed by the provider]\n" + COMPACTION["content"] + "\n\nCarrying on.")
    report = session.last_request_report
    assert report is not None and report.converted["compaction -> text part"] == 1
    assert report.dropped["failed compaction block"] == 1

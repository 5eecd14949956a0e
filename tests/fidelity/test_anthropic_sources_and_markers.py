"""Images and documents of every documented source (base64, url, file, text, content), search
results with citations enabled, and the host's ``cache_control`` on any block: exactly as they
came to Anthropic; to OpenAI converted or replaced by a placeholder that says what it was,
every marker that cannot go counted."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import validators_anthropic
import validators_openai_chat
import validators_openai_responses
from fidelity_fixtures import (
    DOCUMENT,
    IMAGE,
    SEARCH,
    URL_IMAGE,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
    open_session,
)

MARK = {"type": "ephemeral"}
FILE_IMAGE = {"type": "image", "source": {"type": "file", "file_id": "file_011img"}}
URL_DOCUMENT = {"type": "document", "title": "rfc.pdf", "source": {"type": "url", "url": "https://x.example/rfc.pdf"}}
FILE_DOCUMENT = {"type": "document", "title": "plan.pdf", "source": {"type": "file", "file_id": "file_011doc"}}
CONTENT_DOCUMENT = {"type": "document", "title": "faq", "citations": {"enabled": True},
                    "source": {"type": "content", "content": [{"type": "text", "text": "Q: where? A: b.py"}]}}
CITED_SEARCH = {**SEARCH, "citations": {"enabled": True}}


def _history() -> list[dict[str, Any]]:
    return copy.deepcopy([
        {"role": "user", "content": [
            {"type": "text", "text": "Everything I have:"}, IMAGE, URL_IMAGE, FILE_IMAGE, DOCUMENT,
            URL_DOCUMENT, FILE_DOCUMENT, CONTENT_DOCUMENT, CITED_SEARCH]},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_21", "name": "fetch", "input": {"what": "all"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_21", "content": [
            {"type": "text", "text": "fetched:"}, FILE_IMAGE, URL_DOCUMENT, FILE_DOCUMENT, CONTENT_DOCUMENT,
            CITED_SEARCH]}]},
    ])


def _strip(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in b.items() if k != "cache_control"} for b in blocks]


def test_every_source_goes_to_anthropic_as_it_came(tmp_path: Path) -> None:
    history = _history()
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request)
    assert _strip(request["messages"][0]["content"]) == history[0]["content"]
    result = request["messages"][2]["content"][0]
    assert _strip(result["content"]) == history[2]["content"][0]["content"]
    assert session.last_request_report is not None and session.last_request_report.lossless


def test_openai_is_told_what_each_source_was(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    request = session.request(_history(), provider="openai")
    validators_openai_chat.check(request)
    texts = json.dumps(request["messages"])
    for said in ("[image omitted: file source, file_011img]",
                 "[document omitted: rfc.pdf, https://x.example/rfc.pdf]",
                 "[document omitted: plan.pdf, file source, file_011doc]",
                 "[document: faq]\\nQ: where? A: b.py",
                 "[search result: Handlers (https://docs.example.com/handlers)]"):
        assert said in texts, said
    assert "0 B" not in texts  # a file id has no size to give: none is invented
    report = session.last_request_report
    assert report is not None and "context of a document" not in report.dropped  # carried as text


def test_a_documents_context_reaches_openai_with_its_text(tmp_path: Path) -> None:
    document = {**CONTENT_DOCUMENT, "context": "written before the redesign"}
    pdf = {**DOCUMENT, "context": "the signed copy"}
    session = open_session(tmp_path)
    request = session.request([{"role": "user", "content": [{"type": "text", "text": "read"}, document, pdf]}],
                              provider="openai")
    validators_openai_chat.check(request)
    parts = request["messages"][-1]["content"]
    assert parts[1]["text"] == "[document: faq]\n[context: written before the redesign]\nQ: where? A: b.py"
    assert parts[2]["type"] == "file"  # a file part has no room for it: counted
    report = session.last_request_report
    assert report is not None and report.dropped["context of a document"] == 1
    responses = session.request(_history(), provider="openai", api="responses")
    validators_openai_responses.check(responses)
    assert "[document omitted: plan.pdf, file source, file_011doc]" in json.dumps(responses["input"])


def test_a_hosts_marker_on_a_server_block_is_kept_for_anthropic_and_counted_for_openai(tmp_path: Path) -> None:
    marked = {**WEB_SEARCH_RESULT, "cache_control": MARK}
    history = [{"role": "user", "content": [{"type": "text", "text": "search"}, {**FILE_IMAGE, "cache_control": MARK}]},
               {"role": "assistant", "content": [WEB_SEARCH_USE, marked, {"type": "text", "text": "Found."}]},
               {"role": "user", "content": "thanks"}]
    session = open_session(tmp_path)
    request = session.request(history)
    validators_anthropic.check(request)
    assert request["messages"][1]["content"][1] == marked
    report = session.last_request_report
    assert report is not None and report.user_breakpoints == 2
    session.request(history, provider="openai")
    report = session.last_request_report
    assert report is not None
    assert report.dropped["cache_control of a web_search_tool_result block"] == 1
    assert report.dropped["cache_control of a image block"] == 1

"""``content_tokens`` prices Anthropic's newer blocks by what the model reads: never 0, never
the base64 of an encrypted page or a fetched PDF as if it were text."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.content_tokens import PART_OVERHEAD_TOKENS, content_tokens, message_content_tokens, part_tokens
from hermes_core.intake import read_history
from hermes_core.sdk import normalize_messages
from hermes_core.tokens import RequestCounter, estimate_message_tokens

from fidelity_fixtures import (
    BASH_RESULT,
    CITED_DOCUMENT,
    COMPACTION,
    CONTAINER_UPLOAD,
    EDITOR_ERROR,
    MCP_RESULT,
    MCP_USE,
    TOOL_SEARCH_RESULT,
    WEB_FETCH_RESULT,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
    open_session,
)
from hypothesis_budget import examples


def _search_result(page: bytes) -> dict[str, object]:
    block = copy.deepcopy(WEB_SEARCH_RESULT)
    block["content"] = [{**block["content"][0], "encrypted_content": base64.b64encode(page).decode()}]
    return block


@settings(max_examples=examples(25), deadline=None)
@given(st.integers(min_value=0, max_value=60_000))
def test_an_encrypted_search_page_costs_its_decoded_size(size: int) -> None:
    block = _search_result(bytes(size))
    encoded = len(block["content"][0]["encrypted_content"])  # type: ignore[index]
    tokens = part_tokens(block)
    assert size // 4 <= tokens <= size // 4 + 40  # title, url, page age, overhead
    if size > 3_000:
        assert tokens < encoded // 4 * 0.8  # not the base64 read as text


def test_a_fetched_pdf_costs_what_the_same_document_costs() -> None:
    document = WEB_FETCH_RESULT["content"]["content"]
    fetched = part_tokens(WEB_FETCH_RESULT)
    assert part_tokens(document) < fetched <= part_tokens(document) + 30
    data = document["source"]["data"]
    assert fetched < len(data) // 4  # decoded bytes, not the base64 characters


def test_redacted_thinking_costs_what_it_hides_not_its_base64() -> None:
    hidden = bytes(range(256)) * 40
    block = {"type": "redacted_thinking", "data": base64.b64encode(hidden).decode()}
    low = len(hidden) // 4 + PART_OVERHEAD_TOKENS
    assert low <= part_tokens(block) <= low + 2  # padding counted as a byte or two
    assert part_tokens(block) < len(block["data"]) // 4


def test_mcp_calls_and_results_cost_what_client_calls_and_results_cost() -> None:
    as_client = {"type": "tool_use", "id": MCP_USE["id"], "name": MCP_USE["name"], "input": MCP_USE["input"]}
    assert part_tokens(MCP_USE) == part_tokens(as_client)
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": MCP_RESULT["content"]}
    assert part_tokens(MCP_RESULT) == part_tokens(result) > 3 * PART_OVERHEAD_TOKENS


def test_a_documents_title_and_context_are_counted() -> None:
    bare = {k: v for k, v in CITED_DOCUMENT.items() if k not in ("title", "context")}
    extra = len(CITED_DOCUMENT["title"]) + len(CITED_DOCUMENT["context"])
    assert part_tokens(CITED_DOCUMENT) - part_tokens(bare) in range(extra // 4, extra // 4 + 2)


def test_every_server_block_costs_something() -> None:
    for block in (WEB_SEARCH_USE, WEB_SEARCH_RESULT, WEB_FETCH_RESULT, BASH_RESULT, EDITOR_ERROR,
                  TOOL_SEARCH_RESULT, MCP_USE, MCP_RESULT, CONTAINER_UPLOAD):
        assert part_tokens(block) > PART_OVERHEAD_TOKENS, block["type"]
    assert BASH_RESULT["content"]["stdout"]  # its output is what it costs, with its envelope
    assert part_tokens(BASH_RESULT) >= len(BASH_RESULT["content"]["stdout"]) // 4


def test_a_kept_reply_counts_its_server_results() -> None:
    reply = {"role": "assistant", "content": [WEB_SEARCH_USE, _search_result(bytes(20_000)),
                                              {"type": "text", "text": "Found it."}]}
    [message] = normalize_messages([reply])
    assert message["content"] == "Found it."
    assert message_content_tokens(message) == content_tokens(reply["content"])
    assert message_content_tokens(message) >= 20_000 // 4


def test_a_compaction_block_costs_its_summary_and_decoded_state() -> None:
    summary, state = COMPACTION["content"], COMPACTION["encrypted_content"]
    low = (len(summary) + len(state) * 3 // 4) // 4
    assert low <= part_tokens(COMPACTION) - PART_OVERHEAD_TOKENS <= low + 2


def test_the_sessions_counters_price_a_kept_reply_as_content_tokens_does() -> None:
    # role, content and the kept blocks: three keys, its blocks still counted (they are sent);
    # the exact counter does not tokenize encrypted pages (their base64 tokenizes ~3.7x higher)
    reply = {"role": "assistant", "content": [WEB_SEARCH_USE, _search_result(bytes(range(256)) * 200),
                                              {"type": "text", "text": "Found it."}]}
    [message] = normalize_messages([reply])
    assert len(message) == 3
    expected = message_content_tokens(message)
    assert expected > 12_000
    counter = RequestCounter("claude-sonnet-4-5", "anthropic")
    for counted in (estimate_message_tokens(message), counter.message_tokens(message)):
        assert 0.9 * expected <= counted <= 1.2 * expected


def test_the_preflight_counts_kept_search_pages_in_a_list_it_returned(tmp_path: Path) -> None:
    # A host continues with the canonical list a Session call returned: its kept replies'
    # pages count as they did in the host's own Anthropic-shaped list.
    history: list[dict[str, Any]] = []
    for i in range(20):
        history.append({"role": "user", "content": f"question {i}"})
        history.append({"role": "assistant", "content": [
            {**WEB_SEARCH_USE, "id": f"srvtoolu_{i}"}, _search_result(bytes(range(256)) * 40),
            {"type": "text", "text": f"answer {i}"}]})
        history[-1]["content"][1]["tool_use_id"] = f"srvtoolu_{i}"
    canonical = normalize_messages(history)
    assert read_history(canonical).estimate == read_history(history).estimate > 40_000
    session = open_session(tmp_path, context_length=60_000)
    assert len(session.before_request(canonical)) < len(canonical)

"""The LLM summariser's input lists the calls the model made through Anthropic's server tools
and MCP connector, as the extractive notes do: the tool, its input, the outcome (errors as
errors), secrets redacted, encrypted pages never shown; a paused turn's call is answered by the
result that opens the next reply, and a call nothing answered says so."""

from __future__ import annotations

from typing import Any

from hermes_core.sdk import normalize_messages
from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.serialize import prepare_turns, serialize_turns

from fidelity_fixtures import (
    BASH_USE,
    ENCRYPTED_PAGE,
    MCP_RESULT,
    MCP_USE,
    WEB_FETCH_RESULT,
    WEB_FETCH_USE,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
)

SECRET = "sk-proj-" + "Qq1Ww2Ee3Rr4Tt5Yy6Uu7Ii8"
BASH_FAILED = {"type": "bash_code_execution_tool_result", "tool_use_id": BASH_USE["id"], "content": {
    "type": "bash_code_execution_result", "stdout": "", "return_code": 2,
    "stderr": "python: can't open file 'calc.py'\n", "content": []}}
MCP_FAILED = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_09", "is_error": True,
              "content": [{"type": "text", "text": f"401 unauthorized for token {SECRET}"}]}


def _history() -> list[dict[str, Any]]:
    return normalize_messages([
        {"role": "user", "content": "Where do request handlers live?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Searching."}, WEB_SEARCH_USE,
                                          WEB_SEARCH_RESULT, WEB_FETCH_USE, WEB_FETCH_RESULT, BASH_USE]},
        {"role": "assistant", "content": [BASH_FAILED, {"type": "text", "text": "calc.py is missing."}]},
        {"role": "user", "content": "Check the tracker."},
        {"role": "assistant", "content": [
            MCP_USE, MCP_RESULT,
            {"type": "mcp_tool_use", "id": "mcptoolu_09", "name": "close_issue", "server_name": "tracker",
             "input": {"issue": 12, "token": SECRET}}, MCP_FAILED,
            {"type": "server_tool_use", "id": "srvtoolu_99WS", "name": "web_search",
             "input": {"query": "never answered"}}]},
    ])


def test_the_summariser_input_lists_server_and_mcp_calls_with_outcomes() -> None:
    text = serialize_turns(prepare_turns(_history()))
    assert '[web_search] query="request handler docs" -> 2 results: https://docs.example.com/handlers' in text
    assert "[web_fetch] url=\"https://docs.example.com/spec.pdf\" -> fetched https://docs.example.com/spec.pdf" in text
    assert "[mcp tracker/list_issues]" in text
    assert "[mcp tracker/close_issue]" in text and "-> ERROR 401 unauthorized" in text
    assert '[web_search] query="never answered" -> no result recorded' in text


def test_a_paused_call_is_answered_by_the_next_reply() -> None:
    turns = prepare_turns(_history())
    paused = [line for line in turns[2].get("server_calls", ()) if line.startswith("[bash_code_execution]")]
    assert len(paused) == 1 and "-> ERROR exit 2: python: can't open file 'calc.py'" in paused[0]
    assert not any("no result recorded" in line for line in turns[1].get("server_calls", ()))


def test_secrets_are_redacted_and_encrypted_pages_never_shown() -> None:
    text = serialize_turns(prepare_turns(_history()))
    assert "[mcp tracker/close_issue] issue=12 token=" in text  # the call is there, its token is not
    assert SECRET not in text
    assert ENCRYPTED_PAGE[:40] not in text
    assert WEB_SEARCH_RESULT["content"][0]["encrypted_content"][:40] not in text


def test_a_message_without_server_calls_gets_no_section() -> None:
    text = serialize_turns(prepare_turns([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    assert "Server tool calls" not in text


def test_the_fallback_handoff_from_prepared_turns_keeps_them() -> None:
    """An LLM summariser that fails falls back to the handoff over the prepared turns (no kept
    blocks there): the calls' lines they carry are its completed actions."""
    notes = build_handoff(prepare_turns(_history()), previous_summary=None, focus_topic=None, max_chars=6_000)
    actions = notes.split("## Completed actions\n", 1)[1]
    assert '[web_search] query="request handler docs" -> 2 results' in actions
    assert "[mcp tracker/close_issue]" in actions and "-> ERROR 401 unauthorized" in actions
    assert SECRET not in notes

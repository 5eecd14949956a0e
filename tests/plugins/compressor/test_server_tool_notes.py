"""The extractive handoff lists the calls the model made through Anthropic's server tools and
MCP connector as it lists client calls: the tool, its input, the outcome in one line, errors as
errors, secrets redacted; so that after a compaction the agent knows it already searched X."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from fidelity_fixtures import (
    BASH_USE,
    CODE_RESULT,
    CODE_USE,
    EDITOR_ERROR,
    EDITOR_USE,
    MCP_RESULT,
    MCP_USE,
    THINK_1,
    WEB_FETCH_RESULT,
    WEB_FETCH_USE,
    WEB_SEARCH_RESULT,
    WEB_SEARCH_USE,
    open_session,
)

SECRET = "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"
SEARCH_ERROR = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_07WS",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}
BASH_FAILED = {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_03BA", "content": {
    "type": "bash_code_execution_result", "stdout": "", "return_code": 2,
    "stderr": "python: can't open file 'calc.py': [Errno 2] No such file or directory\n", "content": []}}
MCP_FAILED = {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_02", "is_error": True,
              "content": [{"type": "text", "text": f"401 unauthorized for token {SECRET}"}]}


def _history() -> list[dict[str, Any]]:
    """Server and MCP calls in the middle of a conversation, one turn paused between a call and
    its result, then plain turns the compaction keeps."""
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "We are fixing the request handlers today."},
        {"role": "assistant", "content": "Understood; I will start by finding them."},
        {"role": "user", "content": "Where do request handlers live?"},
        {"role": "assistant", "content": [THINK_1, {"type": "text", "text": "Searching."}, WEB_SEARCH_USE,
                                          WEB_SEARCH_RESULT, {"type": "text", "text": "b.py, per the docs."}]},
        {"role": "user", "content": "Search again, fetch the spec and run the numbers."},
        {"role": "assistant", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_07WS", "name": "web_search",
             "input": {"query": "handler internals"}}, SEARCH_ERROR,
            WEB_FETCH_USE, WEB_FETCH_RESULT, BASH_USE]},  # paused: the result opens the next one
        {"role": "assistant", "content": [BASH_FAILED, CODE_USE, CODE_RESULT, EDITOR_USE, EDITOR_ERROR,
                                          {"type": "text", "text": "calc.py is missing."}]},
        {"role": "user", "content": "Check the tracker."},
        {"role": "assistant", "content": [
            MCP_USE, MCP_RESULT,
            {"type": "mcp_tool_use", "id": "mcptoolu_02", "name": "close_issue", "server_name": "tracker",
             "input": {"issue": 12, "token": SECRET}}, MCP_FAILED,
            {"type": "text", "text": "Closing #12 failed."}]},
    ]
    for n in range(6):
        history += [{"role": "user", "content": f"Next step {n}: keep going with the handler work."},
                    {"role": "assistant", "content": f"Step {n} done; the handler work goes on."}]
    return copy.deepcopy(history)


def _notes(tmp_path: Path) -> str:
    session = open_session(tmp_path, context_length=16_000)
    result = session.compress(_history(), force=True)
    notes = [m["content"] for m in result.messages
             if isinstance(m.get("content"), str) and "## Completed actions" in m["content"]]
    assert len(notes) == 1, [m.get("content") for m in result.messages]
    return notes[0]


def _section(notes: str, title: str) -> str:
    return notes.split(f"## {title}\n", 1)[1].split("\n\n", 1)[0]


def test_each_server_and_mcp_call_is_an_action_with_its_input_and_outcome(tmp_path: Path) -> None:
    actions = _section(_notes(tmp_path), "Completed actions")
    for line in (
        '[web_search] query="request handler docs" -> 2 results: https://docs.example.com/handlers, '
        "https://blog.example.com/b-py",
        '[web_fetch] url="https://docs.example.com/spec.pdf" -> fetched https://docs.example.com/spec.pdf',
        '[code_execution] code="print(sum(range(10)))" -> exit 0: 45',
        '[mcp tracker/list_issues] state="open" -> #12 crash in b.py (+1 more lines)',
    ):
        assert line in actions, (line, actions)
    # the paused turn: the call in one message, its result in the next, read as one call
    assert "[bash_code_execution] command=\"python -c 'print(6*7)'\" -> exit 2: python: can't open file" in actions
    assert "no result recorded" not in actions
    assert "page text the search engine kept" not in actions  # encrypted pages: never shown


def test_server_errors_are_error_items(tmp_path: Path) -> None:
    errors = _section(_notes(tmp_path), "Errors")
    assert ('[web_search] query="handler internals": web_search_tool_result_error: max_uses_exceeded'
            " — still failing") in errors
    assert '[text_editor_code_execution] command="view" path="/tmp/out.txt": ' \
           "text_editor_code_execution_tool_result_error: unavailable — still failing" in errors
    assert "[bash_code_execution]" in errors and "exit 2" in errors
    assert "[mcp tracker/close_issue] issue=12" in errors and "401 unauthorized" in errors
    # successes are not errors
    assert "[web_fetch]" not in errors and "[code_execution] " not in errors


def test_secrets_in_inputs_and_results_are_redacted(tmp_path: Path) -> None:
    notes = _notes(tmp_path)
    assert SECRET not in notes
    assert "[mcp tracker/close_issue]" in notes


def test_a_call_whose_result_never_came_claims_no_outcome(tmp_path: Path) -> None:
    history = _history()
    history[6]["content"] = history[6]["content"][1:]  # the paused call's result lost
    result = open_session(tmp_path, context_length=16_000).compress(history, force=True)
    notes = next(m["content"] for m in result.messages
                 if isinstance(m.get("content"), str) and "## Completed actions" in m["content"])
    assert "[bash_code_execution] command=\"python -c 'print(6*7)'\" -> no result recorded" in notes
    assert "exit 2" not in notes

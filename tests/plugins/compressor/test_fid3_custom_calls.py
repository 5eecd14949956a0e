"""Custom tool calls (``{"type": "custom", "custom": {"name", "input"}}``: free-text input) are
named in the compressor's one-liners and in the handoff's facts, as function calls are (they
read only ``function`` calls and said ``[unknown]``)."""

from __future__ import annotations

from typing import Any

from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.prune import prune_tool_results

from compressor_support import assistant, call, tool, user


def _custom(ident: str, name: str, text: str) -> dict[str, Any]:
    return {"id": ident, "type": "custom", "custom": {"name": name, "input": text}}


def _history() -> list[dict[str, Any]]:
    return [
        user("run the report query and then fix the data"),
        {"role": "assistant", "content": None, "tool_calls": [_custom("c1", "run_sql", "SELECT * FROM orders")]},
        tool("c1", "order row\n" * 200),
        {"role": "assistant", "content": None, "tool_calls": [_custom("c2", "run_sql", "DELETE FROM stale")]},
        {**tool("c2", "error: permission denied for table stale"), "_is_error": True},
        assistant("", call("c3", "terminal", command="make check")), tool("c3", "ok\n" * 100),
        user("thanks, go on"),
    ]


def test_a_demoted_custom_result_names_its_tool() -> None:
    out, stats = prune_tool_results(_history(), protect_tail_count=1, min_prune_chars=50)
    assert stats.changed
    line = out[2]["content"]
    assert line != _history()[2]["content"] and "run_sql" in line and "unknown" not in line


def test_the_handoff_names_custom_calls_and_their_errors() -> None:
    notes = build_handoff(_history(), previous_summary=None, focus_topic=None, max_chars=6_000)
    assert "[run_sql]" in notes and "[unknown]" not in notes
    errors = notes.split("## Errors\n", 1)[1].split("\n\n", 1)[0]
    assert "[run_sql]" in errors and "permission denied" in errors

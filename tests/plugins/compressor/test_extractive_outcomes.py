"""The extractive summary takes each result's outcome from its verdict, never from a line's text.

Condensed results reach the summary raw (planned by the free passes) or as one-liners already in
the history (built by an earlier pass, whose verdict may be remembered or not): each way, a
success whose line holds "; " (a path, a command) is no error, a failed edit is one, and a
duplicate marker is a back-reference whose outcome is the later copy's.
"""

from __future__ import annotations

from typing import Any

import pytest

from hermes_plugins._common import failures
from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.prune import DUPLICATE_PREFIX, prune_tool_results

from compressor_support import assistant, call, make_engine, summary_of, system, tool, user

OUTPUT = "".join(f"row {i}: fine, value={i * 3}\n" for i in range(150))


def _through_engine(messages: list[dict[str, Any]]) -> str:
    failures.clear_cache()
    out = make_engine(8_000).compress(list(messages), force=True)
    return str(summary_of(out)["content"])


def _through_lines(messages: list[dict[str, Any]], remembered: bool) -> str:
    """The history as an earlier pass left it (one-liners in place), summarised."""
    failures.clear_cache()
    demoted, _stats = prune_tool_results(messages, protect_tail_count=1)
    if not remembered:
        failures.clear_cache()  # lines of another process: no verdict remembered
    return build_handoff([m for m in demoted if m.get("role") != "system"])


READERS = {
    "engine": _through_engine,
    "lines remembered": lambda m: _through_lines(m, True),
    "lines of another process": lambda m: _through_lines(m, False),
}


def _section(summary: str, title: str) -> str:
    """The body of one ``## title`` section ('' when absent)."""
    start = summary.find(f"## {title}")
    if start == -1:
        return ""
    end = summary.find("\n## ", start + 1)
    return summary[start: end if end != -1 else len(summary)]


def _history(*exchanges: tuple[dict[str, Any], dict[str, Any]]) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [system(), user("fix the docs and the build, please"),
                                      assistant("", call("h0", "read_file", path="README.md")),
                                      tool("h0", OUTPUT.replace("fine", "head")), assistant("read the readme")]
    for i, (made, answer) in enumerate(exchanges):
        messages += [assistant(f"step {i}", made), answer, assistant(f"done step {i}")]
    for i in range(3):  # enough to condense for the engine, which keeps a tail
        messages += [assistant("", call(f"f{i}", "read_file", path=f"src/filler_{i}.py")),
                     tool(f"f{i}", OUTPUT.replace("fine", f"filler {i}")), assistant(f"read filler {i}")]
    # A tail to keep: the condensed part is everything above.
    messages += [user("now summarise what happened"), assistant("working on it " * 40)]
    return messages


@pytest.mark.parametrize("reader", READERS)
def test_a_success_whose_line_holds_a_semicolon_is_no_error(reader: str) -> None:
    messages = _history(
        (call("r1", "read_file", path="docs/a; b.md"), tool("r1", OUTPUT)),
        (call("w1", "Write", file_path="notes/exit code 1.txt", content="one\ntwo\n"),
         tool("w1", "File written." + " " * 2500)),
        (call("t1", "terminal", command="cd build; make"), tool("t1", OUTPUT + "done\n")),
    )
    summary = READERS[reader](messages)
    assert "still failing" not in summary
    errors = _section(summary, "Errors")
    assert "docs/a; b.md" not in errors and "exit code 1.txt" not in errors and "cd build" not in errors
    assert "docs/a; b.md" in summary  # the read is still listed, as a read


@pytest.mark.parametrize("reader", READERS)
def test_a_failed_edit_is_an_error_though_its_line_reads_like_a_success(reader: str) -> None:
    failed = "Error: String to replace not found in file.\nString: def ledger_total(\n" + " " * 2200
    messages = _history(
        (call("e1", "Edit", file_path="src/ledger.py", old_string="def ledger_total(", new_string="def total("),
         tool("e1", failed)),
    )
    summary = READERS[reader](messages)
    errors = _section(summary, "Errors")
    assert "src/ledger.py" in errors and "String to replace not found" in errors
    assert "still failing" in errors


@pytest.mark.parametrize("reader", READERS)
def test_a_duplicate_of_a_failure_is_that_failure_once(reader: str) -> None:
    broken = "Traceback (most recent call last):\n  File \"src/app.py\", line 41, in run\n" \
             "KeyError: 'currency_code'\n" + OUTPUT
    messages = _history(
        (call("t1", "terminal", command="pytest -k ledger"), {**tool("t1", broken), "_is_error": True}),
        (call("t2", "terminal", command="pytest -k ledger"), {**tool("t2", broken), "_is_error": True}),
    )
    summary = READERS[reader](messages)
    errors, commands = _section(summary, "Errors"), _section(summary, "Commands")
    assert "identical to the later result" not in errors + commands
    assert errors.count("KeyError: 'currency_code'") == 1
    assert commands.count("pytest -k ledger") == 1 and "succeeded" not in commands


@pytest.mark.parametrize("reader", READERS)
def test_a_duplicate_of_a_success_is_a_success(reader: str) -> None:
    messages = _history(
        (call("t1", "terminal", command="make docs"), tool("t1", OUTPUT)),
        (call("t2", "terminal", command="make docs"), tool("t2", OUTPUT)),
    )
    summary = READERS[reader](messages)
    assert "still failing" not in summary
    assert "`make docs` ×2" in _section(summary, "Commands")


def test_a_duplicate_marker_flagged_failed_is_no_failed_command_of_its_own() -> None:
    # The later copy lies beyond the condensed turns: the marker alone says nothing failed twice.
    turns = [
        user("run it"),
        assistant("", call("t1", "terminal", command="pytest -k ledger")),
        {**tool("t1", f"{DUPLICATE_PREFIX}: identical to the later result of call t9; see there]"), "_is_error": True},
        assistant("ran it"),
    ]
    summary = build_handoff(turns)
    assert _section(summary, "Errors") == "" and _section(summary, "Commands") == ""

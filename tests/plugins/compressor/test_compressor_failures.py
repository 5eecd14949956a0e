"""Errors survive demotion: failed results keep their error in the one-liner (issue 13)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins._common.error_text import ERROR_MAX
from hermes_plugins._common.failures import failure_of
from hermes_plugins.compressor.oneliners import (
    looks_demoted,
    summarize_tool_result,
    tool_line,
)
from hermes_plugins.compressor.prune import prune_tool_results

from hypothesis_budget import examples

PYTEST_OUTPUT = (
    "============================= test session starts ==============================\n"
    + "collected 12 items\n\n" + "tests/test_ledger.py ....F\n" * 100
    + "Traceback (most recent call last):\n"
    '  File "/usr/lib/python3.12/site-packages/_pytest/python.py", line 194, in pytest_pyfunc_call\n'
    '  File "src/payments/ledger.py", line 41, in post_entry\n'
    '    code = entry["currency_code"]\n'
    "KeyError: 'currency_code'\n"
    + "filler line\n" * 103
)


def args(**kw: object) -> str:
    return json.dumps(kw)


def test_the_issue_example_keeps_exit_code_error_and_location() -> None:
    content = PYTEST_OUTPUT + '{"exit_code": 1}'
    line = summarize_tool_result("terminal", args(command="pytest -k ledger"), content)
    assert line == (
        "[terminal] ran `pytest -k ledger` -> exit 1, 212 lines; "
        "KeyError: 'currency_code' (src/payments/ledger.py:41)"
    )
    assert looks_demoted(line)  # never demoted a second time (which would lose the error)


@pytest.mark.parametrize(
    "name, arguments, content, is_error, expected",
    [
        # Hermes Agent: JSON with a non-zero exit code
        ("terminal", args(command="gh pr list"),
         '{"output": "/usr/bin/bash: line 3: gh: command not found", "exit_code": 127, "error": null}', False,
         "[terminal] ran `gh pr list` -> exit 127, 1 lines; /usr/bin/bash: line 3: gh: command not found"),
        # Hermes Agent: a tool's JSON error, first and last line
        ("patch", args(mode="replace", path="a.py"),
         '{"success": false, "error": "Patch validation failed (no files were modified):\\n  - a.py: hunk not found"}',
         False, ("[patch] replace in a.py (106 chars result); Patch validation failed (no files were modified): "
         "… - a.py: hunk not found")),
        # Claude Code: is_error metadata and the "Exit code N" header
        ("Bash", args(command="git push"), ("Exit code 128\nfatal: The current branch x has no upstream branch.\n"
         "To push the current branch, use\n\n    git push --set-upstream origin x"), True,
         "[Bash] ran `git push` -> exit 128, 5 lines; fatal: The current branch x has no upstream branch."),
        ("Read", args(file_path="big.jsonl"), "File content (85812 tokens) exceeds maximum allowed tokens (25000).",
         True, ("[Read] read big.jsonl from line 1 (67 chars); File content (85812 tokens) exceeds maximum "
         "allowed tokens (25000).")),
        # tau-bench: an "Error:" line
        ("book_reservation", args(user_id="mia_li_3668", flight="HAT229"), "Error: not enough seats on flight HAT229",
         False, ("[book_reservation] user_id=mia_li_3668 flight=HAT229 (40 chars result); "
         "Error: not enough seats on flight HAT229")),
        # OpenHands: the exit note at the end
        ("execute_bash", args(command="make"), ("cc -c main.c\nmain.c:12:5: error: expected ';'\n"
         "[The command completed with exit code 2.]"), False,
         "[execute_bash] ran `make` -> exit 2, 3 lines; main.c:12:5: error: expected ';'"),
        # Codex: a command list
        ("shell", args(command=["bash", "-lc", "cargo test"]), "error[E0425]: cannot find value `x`\nExit code: 101",
         False, "[shell] ran `cargo test` -> exit 101, 2 lines; error[E0425]: cannot find value `x`"),
    ],
)
def test_failed_results_keep_their_error(name: str, arguments: str, content: str, is_error: bool, expected: str) -> None:
    assert summarize_tool_result(name, arguments, content, is_error) == expected
    assert tool_line(name, arguments, content, is_error) == expected


@pytest.mark.parametrize(
    "content",
    [
        '{"output": "ok", "exit_code": 0, "error": null}',
        '{"output": "x", "exit_code": 0, "error": ""}',
        "try:\n    run()\nexcept sqlite3.Error:\n    log('error: ignored')\n",
        "def f():\n    raise ValueError('x')\n",
        "ERROR: lines in a log\nexit code: 0",  # an explicit exit 0 wins over text
        '{"results": [{"title": "error handling"}], "total_count": 1}',
    ],
)
def test_successful_results_keep_the_short_form(content: str) -> None:
    assert failure_of(content) is None
    line = summarize_tool_result("terminal", args(command="run"), content)
    assert ";" not in line and line.endswith("lines output")


def test_file_reads_are_not_failures_because_of_what_the_file_says() -> None:
    log = "2026-01-01 ERROR: disk full\nTraceback (most recent call last):\n  KeyError: 'x'\n" * 20
    assert failure_of(log, reads=True) is None
    assert "; " not in summarize_tool_result("read_file", args(path="app.log"), log)
    assert "; " not in summarize_tool_result("str_replace_editor", args(command="view", path="app.log"), log)
    assert failure_of(log) is not None  # the same text from a command is a failure


def test_error_text_is_capped_and_joins_first_and_last_error_line() -> None:
    content = "Exit code 1\n" + "ValueError: " + "a" * 400 + "\nnoise\nRuntimeError: " + "b" * 400
    failure = failure_of(content)
    assert failure is not None and failure.code == "1"
    assert len(failure.error) <= ERROR_MAX
    assert failure.error.startswith("ValueError: aaa") and " … RuntimeError: bbb" in failure.error


def test_tracebacks_in_long_outputs_are_found_at_the_end() -> None:
    content = "line of build output\n" * 20_000 + "Traceback (most recent call last):\n" \
        '  File "app/main.py", line 7, in <module>\nsqlite3.OperationalError: no such column: id\n'
    failure = failure_of(content)
    assert failure is not None
    assert failure.error == "sqlite3.OperationalError: no such column: id"
    assert failure.where == "app/main.py:7"


def test_demotion_in_the_free_pass_keeps_the_error() -> None:
    failed = PYTEST_OUTPUT + '{"exit_code": 1}'
    messages = [
        {"role": "user", "content": "fix the ledger"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": args(command="pytest")}}]},
        {"role": "tool", "tool_call_id": "c1", "content": failed},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c2", "type": "function", "function": {"name": "Bash", "arguments": args(command="ls")}}]},
        {"role": "tool", "tool_call_id": "c2", "content": "permission trouble\n" * 200, "_is_error": True},
    ] + [{"role": "user", "content": f"next {i}"} for i in range(6)]
    out, stats = prune_tool_results(messages, protect_tail_count=4)
    assert stats.demoted == 2
    assert out[2]["content"].endswith("; KeyError: 'currency_code' (src/payments/ledger.py:41)")
    assert out[4]["content"] == "[Bash] ran `ls` -> exit ?, 201 lines; permission trouble"


@settings(max_examples=examples(80), deadline=None)
@given(st.text(max_size=400), st.booleans())
def test_one_liners_of_any_output_are_one_bounded_line(content: str, is_error: bool) -> None:
    line = summarize_tool_result("terminal", args(command="x"), content, is_error)
    assert "\n" not in line and len(line) < 800
    if failure_of(content, is_error=is_error) is not None:
        assert looks_demoted(line)


@pytest.mark.parametrize(
    "name, arguments, content, expected",
    [
        ("Edit", args(file_path="lib/a.ex", old_string="x\ny", new_string="z"), "ok",
         "[Edit] edited lib/a.ex, 2 lines replaced"),
        ("MultiEdit", args(file_path="lib/a.ex", edits=[{}, {}, {}]), "ok", "[MultiEdit] 3 edits in lib/a.ex"),
        ("Write", args(file_path="b.md", content="1\n2"), "ok", "[Write] wrote to b.md (2 lines)"),
        ("Grep", args(pattern="def main", path="src"), "Found 4 files\na\nb\nc\nd", "[Grep] search for 'def main' in src -> 4 matches"),
        ("Glob", args(pattern="**/*.py"), "a.py\nb.py", "[Glob] files matching '**/*.py' in . -> 2 matches"),
        ("TodoWrite", args(todos=[{"content": "a", "status": "completed"},
                                  {"content": "b", "status": "in_progress", "activeForm": "Writing tests"}]), "ok",
         "[TodoWrite] 2 todos (1 done, 1 in progress); now: Writing tests"),
        ("Task", args(description="Find callers", prompt="...", subagent_type="Explore"), "r" * 10,
         "[Task] Explore 'Find callers' (10 chars result)"),
        ("str_replace_editor", args(command="str_replace", path="/testbed/src/f.py", old_str="a", new_str="b"), "ok",
         "[str_replace_editor] str_replace in /testbed/src/f.py (2 chars result)"),
        ("str_replace_editor", args(command="create", path="/testbed/r.py", file_text="a\nb\nc"), "ok",
         "[str_replace_editor] created /testbed/r.py (3 lines)"),
        ("str_replace_editor", args(command="view", path="/testbed", view_range=[1, 40]), "v" * 9,
         "[str_replace_editor] view /testbed lines 1-40 (9 chars)"),
        ("submit", "{}", "diff", "[submit] submitted the work (4 chars result)"),
        ("apply_patch", args(input="*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Add File: src/b.rs\n"),
         "Done", "[apply_patch] patched src/a.rs (modified), src/b.rs (created) (4 chars result)"),
        ("shell", args(command=["apply_patch", "*** Begin Patch\n*** Delete File: old.txt\n"]), "Done",
         "[shell] patched old.txt (deleted) (4 chars result)"),
        ("browser", args(code='goto("https://example.com")'), "p" * 3, '[browser] `goto("https://example.com")` (3 chars)'),
        ("execute_ipython_cell", args(code="print(1)"), "1", "[execute_ipython_cell] `print(1)` (1 lines output)"),
        ("finish", args(message="Fixed the bug"), "", "[finish] finished: 'Fixed the bug'"),
    ],
)
def test_other_agents_tools_get_specific_lines(name: str, arguments: str, content: str, expected: str) -> None:
    assert summarize_tool_result(name, arguments, content) == expected


def test_false_and_zero_arguments_print_as_themselves() -> None:
    assert summarize_tool_result("read_file", args(path="a.py", offset=0), "x") == "[read_file] read a.py from line 0 (1 chars)"
    assert summarize_tool_result("memory", args(action=False, target=0), "x") == "[memory] False on 0"
    assert summarize_tool_result("acme", args(dry_run=False, count=0), "x") == "[acme] dry_run=False count=0 (1 chars result)"
    assert summarize_tool_result("search_files", args(pattern=0, path=""), "[]") == (
        "[search_files] content search for '0' in . -> ? matches")


def test_a_big_json_result_is_read_from_its_ends_without_a_full_parse() -> None:
    output = "building\n" * 20_000 + 'Traceback (most recent call last):\n  File "app/x.py", line 3\nKeyError: \'k\'\n'
    failure = failure_of(json.dumps({"output": output, "exit_code": 1, "error": None}))
    assert failure == ("1", "KeyError: 'k'", "app/x.py:3")
    patch = failure_of(json.dumps({"success": False, "error": "Patch failed:\n bad hunk", "diff": "x" * 50_000}))
    assert patch is not None and patch.error == "Patch failed: … bad hunk"
    assert failure_of(json.dumps({"output": "é\"ok\"\n" * 20_000, "exit_code": 0, "error": None})) is None


def test_an_exception_line_at_the_end_marks_a_failure_but_code_does_not() -> None:
    assert failure_of("running...\nsqlite3.OperationalError: no such column: id\n") is not None
    assert failure_of("try:\n    x()\nexcept sqlite3.OperationalError:\n    pass\n") is None


def test_an_exit_code_at_the_end_of_a_read_file_is_the_files_text() -> None:
    log = "started the worker\n" * 40 + "Process finished with exit code 1\n"
    assert failure_of(log, reads=True) is None
    assert "; " not in summarize_tool_result("read_file", args(path="run.log"), log)
    failed = failure_of(log)  # the same text from a command is its exit code
    assert failed is not None and failed.code == "1"
    header = "Exit code 2\ncat: run.log: No such file or directory"
    read = failure_of(header, reads=True)  # a header the tool wrote still counts
    assert read is not None and read.code == "2"

"""Nothing invented (issue 29): a summary states a failure only on evidence.

A call with no result is "no result recorded" (not a failure, not a success); a result recorded
just before its call is re-attached to it (no orphan, no placeholder); a failure needs a flag, a
non-zero exit code or error text, and a later success of the same command resolves it. All
fixtures are written by hand.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.pairing import early_answers, match_results, pairing_problems, repair_pairing
from hermes_core.transcript_format import ReportBuilder
from hermes_core.transcripts import MISSING_RESULT_TEXT, normalize_pairing
from hermes_plugins._common import failures
from hermes_plugins._common.failures import failure_of, is_no_result
from hermes_plugins.compressor.extractive import build_handoff
from hermes_plugins.compressor.oneliners import summarize_tool_result, tool_line
from hermes_plugins.compressor.sections import STILL_FAILING

from compressor_support import assistant, call, tool, user
from hypothesis_budget import examples


def _section(summary: str, title: str) -> str:
    start = summary.find(f"## {title}")
    if start == -1:
        return ""
    end = summary.find("\n## ", start + 1)
    return summary[start: end if end != -1 else len(summary)]


def _normalized(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return normalize_pairing(messages, ReportBuilder(format="openai"))


# --- a missing result ---------------------------------------------------------------------------


def test_missing_result_is_no_result_recorded_not_a_failure() -> None:
    messages = _normalized([
        user("run the tests"),
        assistant("", call("c1", "bash", command="pytest -q")),
        user("thanks, now look at the docs"),
    ])
    placeholder = messages[2]
    assert placeholder["content"] == MISSING_RESULT_TEXT and is_no_result(placeholder)
    # The placeholder's flag is for the provider; it is no evidence of a failure.
    assert failure_of(placeholder["content"], is_error=placeholder.get("_is_error")) is None
    summary = build_handoff(messages)
    assert "## Errors" not in summary
    assert STILL_FAILING not in summary and "failed" not in summary
    assert "[bash] ran `pytest -q` — no result recorded" in _section(summary, "Completed actions")


def test_missing_result_line_claims_nothing() -> None:
    line = summarize_tool_result("bash", json.dumps({"command": "make build"}), MISSING_RESULT_TEXT, True)
    assert line == "[bash] ran `make build` — no result recorded"
    assert tool_line("read_file", json.dumps({"path": "a.py"}), MISSING_RESULT_TEXT, True) \
        == "[read_file] a.py — no result recorded"


def test_missing_result_does_not_resolve_an_earlier_failure() -> None:
    messages = _normalized([
        user("build it"),
        assistant("", call("c1", "bash", command="make build")),
        tool("c1", "gcc: error: main.c: No such file or directory\nexit code: 2"),
        assistant("", call("c2", "bash", command="make build")),
        user("stop there"),
    ])
    errors = _section(build_handoff(messages), "Errors")
    assert "`make build` -> exit 2" in errors and errors.rstrip().endswith(STILL_FAILING)


# --- a result recorded before its call ------------------------------------------------------------


def _early() -> list[dict[str, Any]]:
    return [
        user("read a.py"),
        tool("c1", "print('hello')\n"),
        assistant("", call("c1", "read_file", path="a.py")),
        user("now fix b.py"),
    ]


def test_result_before_its_call_is_reattached_by_the_reader() -> None:
    report = ReportBuilder(format="openai")
    messages = normalize_pairing(_early(), report)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert messages[2]["content"] == "print('hello')\n" and not pairing_problems(messages)
    assert not any(m.get("_injected") == "orphan-tool-result" for m in messages)
    summary = build_handoff(messages)
    assert "no result" not in summary and "## Errors" not in summary
    assert "read a.py from line 1" in summary


def test_result_before_its_call_is_moved_by_the_repair() -> None:
    repaired, report = repair_pairing(_early())
    assert report.moved == 1 and report.dropped_results == 0 and report.dropped_calls == 0
    assert [m["role"] for m in repaired] == ["user", "assistant", "tool", "user"]


def test_early_answers_only_across_tool_messages() -> None:
    # A user turn between the result and the call: the result stays an orphan (kept, labelled).
    messages = [user("a"), tool("c1", "out"), user("b"), assistant("", call("c1", "bash", command="ls")), user("c")]
    answers, unanswered = match_results(messages)
    assert early_answers(messages, answers, unanswered) == {}
    normalized = _normalized(messages)
    orphan = next(m for m in normalized if m.get("_injected") == "orphan-tool-result")
    assert "answers no call" in str(orphan["content"]) and "out" in str(orphan["content"])
    summary = build_handoff(normalized)
    assert "## Errors" not in summary and "no result recorded" in summary
    assert "[tool result 'c1' answers no call] out" in _section(summary, "Completed actions")


def test_early_answers_first_call_of_an_id() -> None:
    messages = [tool("x", "one"), tool("x", "two"),
                assistant("", call("x", "bash", command="a"), call("x", "bash", command="b"))]
    answers, unanswered = match_results(messages)
    assert early_answers(messages, answers, unanswered) == {0: (2, 0), 1: (2, 1)}


# --- evidence -----------------------------------------------------------------------------------


def test_failure_then_success_of_the_same_command_is_resolved() -> None:
    messages = [
        user("make the tests pass"),
        assistant("", call("c1", "bash", command="pytest -q")),
        tool("c1", "FAILED tests/test_a.py::test_x - AssertionError\n1 failed in 0.1s\nexit code: 1"),
        assistant("", call("c2", "bash", command="pytest -q")),
        tool("c2", "3 passed in 0.2s\nexit code: 0"),
        user("good"),
    ]
    errors = _section(build_handoff(messages), "Errors")
    assert "`pytest -q` -> exit 1" in errors and "resolved" in errors and STILL_FAILING not in errors


def test_text_evidence_without_a_flag_is_a_failure() -> None:
    traceback = ('Traceback (most recent call last):\n  File "app/main.py", line 7, in <module>\n'
                 "    run()\nKeyError: 'port'\n")
    messages = [
        user("start the app"),
        assistant("", call("c1", "bash", command="python app/main.py")),
        tool("c1", traceback),
        assistant("", call("c2", "bash", command="npm run build")),
        tool("c2", "error: Could not resolve js/app.js\nexit code: 2"),
        user("what now?"),
    ]
    errors = _section(build_handoff(messages), "Errors")
    assert "`python app/main.py`: KeyError: 'port' (app/main.py:7)" in errors
    assert "`npm run build` -> exit 2: error: Could not resolve js/app.js" in errors


def test_flagged_result_is_a_failure_in_line_and_summary() -> None:
    messages = [
        user("deploy"),
        assistant("", call("c1", "deploy_service", target="prod")),
        {**tool("c1", "quota exceeded for project"), "_is_error": True},
        user("hm"),
    ]
    summary = build_handoff(messages)
    assert "quota exceeded for project" in _section(summary, "Errors")
    line = summarize_tool_result("deploy_service", json.dumps({"target": "prod"}), "quota exceeded for project", True)
    assert line.endswith("; quota exceeded for project")


# --- property: no failure without evidence --------------------------------------------------------

_PLAIN = st.text(alphabet=st.sampled_from("abcdefghij klmnop.,=/\n0123456789"), min_size=0, max_size=80)
_COMMANDS = st.sampled_from(["ls", "make", "pytest -q", "git status", "cat x.txt"])


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(_COMMANDS, st.one_of(_PLAIN, st.just(MISSING_RESULT_TEXT)), st.booleans()),
                min_size=1, max_size=8))
def test_no_error_line_without_evidence(steps: list[tuple[str, str, bool]]) -> None:
    """Outputs of plain words (no error word, no exit code, no flag) - or no result at all -
    never give an error item, a failed command or "still failing"."""
    failures.clear_cache()
    messages: list[dict[str, Any]] = [user("do the work")]
    for i, (command, output, missing) in enumerate(steps):
        messages.append(assistant("", call(f"c{i}", "bash", command=command)))
        if not missing:
            messages.append(tool(f"c{i}", output))
    messages.append(user("report back"))
    summary = build_handoff(_normalized(messages))
    assert "## Errors" not in summary
    assert STILL_FAILING not in summary
    assert not re.search(r"-> (?:failed|exit [1-9])", summary)


def test_shell_and_test_runner_statements_are_evidence() -> None:
    from hermes_plugins._common.failures import _text_says_failed, _text_says_failed_plain

    not_found = "bash: pnpm: command not found"
    pytest_out = ("collected 3 items\n\nFAILED tests/test_api.py::test_port - AssertionError: 80 != 8080\n"
                  "========= 1 failed, 2 passed in 0.12s =========")
    assert failure_of(not_found) is not None and failure_of(pytest_out) is not None
    assert failure_of(pytest_out).first.startswith("FAILED tests/test_api.py::test_port")  # type: ignore[union-attr]
    for quiet in ("===== 3 passed, 0 failed in 0.1s =====", "nothing FAILED here", "the build failed to start? no"):
        assert failure_of(quiet) is None, quiet
    long = "x\n" * 2_000 + pytest_out
    for text in (not_found, pytest_out, long, "ok\n" * 900 + not_found):
        assert _text_says_failed(text) == _text_says_failed_plain(text) is True
    # A file's own text is no evidence.
    assert failure_of(pytest_out, reads=True) is None
    messages = [user("set up"), assistant("", call("c1", "bash", command="pnpm install")), tool("c1", not_found),
                user("then?")]
    assert "`pnpm install`: bash: pnpm: command not found" in _section(build_handoff(messages), "Errors")


_OUTPUTS = [
    "ok", "all fine\n3 passed in 0.1s", "error: boom", "exit code: 2", "exit code: 0", "done, 0 failed",
    'Traceback (most recent call last):\n  File "a.py", line 1, in <module>\nKeyError: \'x\'',
    "FAILED tests/t.py::test_x - AssertionError", "bash: nope: command not found", "the word error inside",
    "except ValueError: pass", MISSING_RESULT_TEXT, "Error: disk full\nexit code: 0",
]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_OUTPUTS), st.booleans()), min_size=1, max_size=10))
def test_error_items_only_for_calls_with_evidence(steps: list[tuple[str, bool]]) -> None:
    """Every error item names a call whose result carries evidence (``failure_of``), and every
    such call has one: nothing invented, nothing failed left out (the room allows all here)."""
    failures.clear_cache()
    messages: list[dict[str, Any]] = [user("do the work")]
    evidence: set[str] = set()
    for i, (output, flagged) in enumerate(steps):
        command = f"step_{i}.sh"
        messages.append(assistant("", call(f"c{i}", "bash", command=command)))
        result = tool(f"c{i}", output)
        if flagged and output != MISSING_RESULT_TEXT:
            result["_is_error"] = True
        messages.append(result)
        if failure_of(output, is_error=result.get("_is_error")) is not None:
            evidence.add(command)
    messages.append(user("report back"))
    errors = _section(build_handoff(_normalized(messages)), "Errors")
    named = set(re.findall(r"`(step_\d+\.sh)`", errors))
    assert named == evidence


def test_gemini_cli_tools_are_known() -> None:
    """Gemini CLI's tools (function calling, as its readers give them): shell failures on
    evidence, a read file's text never, edits and writes listed as files."""
    messages = [
        user("fix the config loader"),
        assistant("", call("g1", "read_file", absolute_path="/repo/src/config.py")),
        tool("g1", "import os\nError: raised when the file is missing\n"),
        assistant("", call("g2", "list_directory", path="/repo/logs")),
        tool("g2", "Directory listing for /repo/logs:\nerror.log\nFAILED_runs.txt"),
        assistant("", call("g3", "replace", file_path="/repo/src/config.py", old_string="a", new_string="b")),
        tool("g3", "Successfully modified file: /repo/src/config.py (1 replacements)."),
        assistant("", call("g4", "run_shell_command", command="pnpm test")),
        tool("g4", "Command: pnpm test\nStdout: (empty)\nStderr: bash: pnpm: command not found\nExit Code: 127"),
        user("and?"),
    ]
    summary = build_handoff(messages)
    errors = _section(summary, "Errors")
    assert "`pnpm test`" in errors and "command not found" in errors
    assert "config.py" not in errors and "logs" not in errors
    assert "/repo/src/config.py — modified" in _section(summary, "Files")


def test_mini_swe_agent_returncode_is_evidence() -> None:
    failed = "<returncode>2</returncode>\n<output>\nls: cannot access 'build': No such file or directory\n</output>"
    fine = "<returncode>0</returncode>\n<output>\nError: this word is only output\n</output>"
    assert failure_of(failed) == failures.Failure("2", "ls: cannot access 'build': No such file or directory", None)
    assert failure_of(fine) is None  # an explicit 0 wins over text
    messages = [user("list the build"), assistant("", call("m1", "bash", command="ls build")), tool("m1", failed),
                assistant("", call("m2", "bash", command="ls src")), tool("m2", fine), user("ok")]
    errors = _section(build_handoff(messages), "Errors")
    assert "`ls build` -> exit 2: ls: cannot access 'build'" in errors and "ls src" not in errors


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.sampled_from(["a", "b", "c"]),
                          st.integers(0, 2)), max_size=14))
def test_reattaching_keeps_every_result_and_stays_valid(script: list[tuple[str, str, int]]) -> None:
    """Random histories with results before, after or far from their calls: the reader's repair
    and the request repair give valid lists; the reader keeps every result (as a result or a
    labelled orphan); the repair moves or counts each one."""
    messages: list[dict[str, Any]] = []
    for n, (role, ident, calls) in enumerate(script):
        if role == "user":
            messages.append(user(f"u{n}"))
        elif role == "assistant":
            messages.append(assistant(f"a{n}", *[call(f"{ident}{k}", "bash", command=f"c{n}") for k in range(calls)])
                            if calls else assistant(f"a{n}"))
        else:
            messages.append(tool(f"{ident}{calls % 2}", f"r{n}"))
    normalized = _normalized([dict(m) for m in messages])
    assert not pairing_problems(normalized)
    kept = [str(m["content"]) for m in normalized if m.get("role") == "tool" or m.get("_injected") == "orphan-tool-result"]
    for m in messages:
        if m["role"] == "tool":
            assert any(m["content"] in text for text in kept)
    repaired, report = repair_pairing([dict(m) for m in messages])
    assert not pairing_problems(repaired)
    results_in = sum(1 for m in messages if m["role"] == "tool")
    results_out = sum(1 for m in repaired if m.get("role") == "tool")
    assert results_out + report.dropped_results == results_in

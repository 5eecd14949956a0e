"""What the person asked survives (issue 29): one rule for "is this a request", every request
of the condensed part in the summary.

The rule (``_common.injected.request_text``) is shared with ``eval``'s request probes; injected
text - harness blocks, tool output pasted as user text, editor hand-offs, chat commands - is
never a request. Fixtures are written by hand after the agents' documented shapes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from hermes_plugins._common.injected import is_request, request_text, requests_of
from hermes_plugins.compressor.extractive import REQUEST_SHORT, build_handoff, fit_requests

from compressor_support import assistant, call, tool, user


def _section(summary: str, title: str) -> str:
    start = summary.find(f"## {title}")
    if start == -1:
        return ""
    end = summary.find("\n## ", start + 1)
    return summary[start: end if end != -1 else len(summary)]


@pytest.mark.parametrize("message", [
    {"role": "user", "content": "[read_file for 'src/app.py'] Result:\nimport os\n"},
    {"role": "user", "content": "[execute_command for 'npm test'] Result:\nCommand executed.\nOutput:\nok"},
    {"role": "user", "content": "<environment_details>\n# VSCode Visible Files\napp.py\n</environment_details>"},
    {"role": "user", "content": "[ERROR] You did not use a tool in your previous response! Please retry."},
    {"role": "user", "content": "<returncode>0</returncode>\n<output>\nfile.txt\n</output>"},
    {"role": "user", "content": "/add src/app.py"},
    {"role": "user", "content": "/run pytest -q"},
    {"role": "user", "content": "<blank>"},
    {"role": "user", "content": "ran the linter, 3 warnings", "_injected": "aider-output"},
    {"role": "user", "content": "<system-reminder>Todo list is empty</system-reminder>"},
    {"role": "user", "content": [{"type": "text", "text": "<environment_details>\nnow: 10:00\n</environment_details>"}]},
])
def test_injected_text_is_not_a_request(message: dict[str, Any]) -> None:
    assert request_text(message) is None and not is_request(message)


@pytest.mark.parametrize(("content", "words"), [
    ("<task>\nAdd a --verbose flag to cli.py\n</task>\n<environment_details>\nx\n</environment_details>",
     "Add a --verbose flag to cli.py"),
    ("[attempt_completion] Result:\nThe user has provided feedback on the results.\n<feedback>\n"
     "keep the old flag too\n</feedback>\n<environment_details>\nx\n</environment_details>", "keep the old flag too"),
    ("[ask_followup_question for 'Which port?'] Result:\n<answer>\n8080\n</answer>", "8080"),
    ("[TASK RESUMPTION] This task was interrupted.\nNew instructions for task continuation:\n"
     "<user_message>\nalso update the README\n</user_message>", "also update the README"),
    ("/ask why does the build fail?", "why does the build fail?"),
    ("fix the parser <system-reminder>be brief</system-reminder>", "fix the parser"),
])
def test_the_persons_words_inside_harness_text(content: str, words: str) -> None:
    assert request_text({"role": "user", "content": content}) == words


@pytest.mark.parametrize("content", ["/\x85", "/\u2028 ", "/ "])
def test_a_slash_and_unicode_whitespace_is_kept_as_typed(content: str) -> None:
    # str.split() splits on U+0085 and U+2028 that lstrip() leaves after the slash: no command
    # word, no IndexError (found by hypothesis through the extractive summary).
    assert request_text({"role": "user", "content": content}) == content


def test_architect_handoff_is_not_a_request() -> None:
    plan = ("Change `parse()` in src/parser.py to return a list of tokens instead of a generator, "
            "and update the two callers in src/cli.py accordingly.")
    messages = [user("make the parser return a list"), assistant(plan), user(plan), assistant("done")]
    assert requests_of(messages) == {0: "make the parser return a list"}
    summary = build_handoff(messages)
    assert summary.count("Change `parse()`") <= 1  # the reply may show as the last step, never as a request
    assert "Change `parse()`" not in _section(summary, "User requests")
    assert "make the parser return a list" in _section(summary, "Latest user request")


def test_cline_history_counts_only_the_task_and_feedback() -> None:
    env = "\n<environment_details>\n# VSCode Visible Files\ncli.py\n</environment_details>"
    messages = [
        user("<task>\nAdd a --verbose flag to cli.py\n</task>" + env),
        assistant("<read_file>\n<path>cli.py</path>\n</read_file>"),
        user("[read_file for 'cli.py'] Result:\nimport sys\nError: not a failure, file text\n" + env),
        assistant("<execute_command>\n<command>python -m pytest</command>\n</execute_command>"),
        user("[execute_command for 'python -m pytest'] Result:\nCommand executed.\nOutput:\n3 passed" + env),
        assistant("<attempt_completion>\n<result>done</result>\n</attempt_completion>"),
        user("[attempt_completion] Result:\nThe user has provided feedback on the results.\n<feedback>\n"
             "also document the flag\n</feedback>" + env),
    ]
    summary = build_handoff(messages)
    assert "also document the flag" in _section(summary, "Latest user request")
    assert "Add a --verbose flag to cli.py" in _section(summary, "User requests")
    assert "Result:" not in _section(summary, "User requests")
    assert "environment_details" not in _section(summary, "User requests")
    assert "## Errors" not in summary  # the file's "Error:" line is its text, not an outcome
    assert "`python -m pytest`" in _section(summary, "Commands")


def _busy_history(requests: list[str]) -> list[dict[str, Any]]:
    """Requests interleaved with failing commands and big outputs competing for room."""
    messages: list[dict[str, Any]] = []
    for i, request in enumerate(requests):
        messages.append(user(request))
        messages.append(assistant(f"working on step {i}", call(f"c{i}", "bash", command=f"make target_{i}")))
        messages.append(tool(f"c{i}", f"error: target_{i} failed because dependency lib_{i}.so is missing "
                             + "x" * 200 + f"\nexit code: {i % 3 + 1}"))
    messages.append(assistant("I will continue."))
    return messages


def _request(i: int) -> str:
    return (f"Request number {i}: please update module_{i}.py so that the handler validates its input "
            f"and logs rejected payloads with the request id, then rerun the suite for area {i}.")


def test_every_request_survives_when_the_room_allows() -> None:
    requests = [_request(i) for i in range(24)]
    summary = build_handoff(_busy_history(requests))
    kept = _section(summary, "User requests") + _section(summary, "Latest user request")
    for request in requests:
        # The opening (what eval's request probe looks for: 80 characters) of every request.
        assert request[:80] in kept, request[:40]
    assert "omitted" not in _section(summary, "User requests")


def test_oldest_requests_shortened_not_dropped() -> None:
    requests = [_request(i) for i in range(30)]
    summary = build_handoff(_busy_history(requests))
    section = _section(summary, "User requests")
    items = [line[2:] for line in section.splitlines() if line.startswith("- ")]
    assert len(items) == 29  # all but the latest, which has its own section
    assert any(item.endswith("…") and len(item) <= REQUEST_SHORT for item in items[:5])  # oldest shortened
    assert items[-1] == requests[-2][:200] or items[-1].startswith(requests[-2][:150])  # newest whole


def test_requests_past_the_room_are_counted() -> None:
    requests = [_request(i) for i in range(120)]
    summary = build_handoff(_busy_history(requests), max_chars=4_000)
    section = _section(summary, "User requests")
    omitted = re.search(r"\(… (\d+) earlier items? omitted\)", section)
    assert omitted is not None
    shown = sum(1 for line in section.splitlines() if line.startswith("- "))
    assert shown + int(omitted.group(1)) == 119
    assert requests[-2][:80] in section  # the newest kept
    # Requests take their share, not all the room: the other sections keep theirs.
    for title in ("## Errors", "## Commands", "## Completed actions"):
        assert title in summary, title


def test_fit_requests_shortens_oldest_first() -> None:
    items = [f"{i} " + "word " * 38 for i in range(10)]
    fitted = fit_requests(items, 1_400)
    assert fitted[-1] == items[-1]
    assert all(len(f) <= REQUEST_SHORT for f in fitted[:3])
    assert fit_requests(items, 100_000) == items


def test_engine_grounds_the_latest_request_in_the_persons_words() -> None:
    from compressor_support import make_engine, summary_of, system

    env = "\n<environment_details>\n# Current Time\n10:00\n</environment_details>"
    messages: list[dict[str, Any]] = [system(), user("<task>\nAdd input validation\n</task>" + env)]
    for i in range(12):
        messages.append(assistant(f"<execute_command>\n<command>make t{i}</command>\n</execute_command>"))
        messages.append(user(f"[execute_command for 'make t{i}'] Result:\n" + "ok line\n" * 300 + env))
    messages.append(assistant("<ask_followup_question>\n<question>Log them?</question>\n</ask_followup_question>"))
    messages.append(user("[ask_followup_question for 'Log them?'] Result:\n<answer>\nyes, log every rejected "
                         "payload\n</answer>" + env))
    for i in range(14):
        messages.append(assistant(f"<read_file>\n<path>src/f{i}.py</path>\n</read_file>"))
        messages.append(user(f"[read_file for 'src/f{i}.py'] Result:\n" + "code\n" * 300 + env))
    out = make_engine(8_000).compress(messages, force=True)
    summary = str(summary_of(out)["content"])
    latest = _section(summary, "Latest user request")
    assert "yes, log every rejected payload" in latest
    assert "Result:" not in latest and "environment_details" not in latest

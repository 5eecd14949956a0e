"""The quality bar of issue 13 on sessions we do not have: hand-made transcripts in each agent's
native format (``eval_scenarios``), read by the transcript readers and compressed by the default
engine at 32k, 64k and the model's window, through the same path as ``hermes-ctx eval``.

Bar per transcript and window: output valid, last user message verbatim, error lines of failed
results kept in context >= 90%, files modified >= 95%, user requests (first 80 chars) >= 90%; and
each transcript must yield the probes it was written to stress (a reader that lost the errors or
the edits would otherwise pass with nothing to check).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hermes_core import Config, PluginHost
from hermes_plugins.evaluation.command import DEFAULT_WINDOWS, _model_window, read_conversations
from hermes_plugins.evaluation.runner import evaluate

from eval_scenarios import (
    BACKOFF,
    DECISION,
    IMPORT_ERROR,
    LAST_REQUEST,
    REQUEST,
    SENDER_NEW,
    SENDER_OLD,
    TOOL_ERROR,
    TRACEBACK,
    Act,
    Call,
    Injected,
    Say,
    Step,
    User,
    aider,
    atif,
    claude_code,
    codex,
    coding_steps,
    hermes_agent,
    long_log,
    openhands,
    responses,
    source_file,
    swe_agent_0x,
    swe_agent_1x,
    tau_bench,
)

BAR = {"errors": 0.90, "files_modified": 0.95, "requests": 0.90}
PASSED = "6 passed in 0.38s"
CC_SUMMARY = (
    "This session is being continued from a previous conversation that ran out of context. "
    "The conversation is summarized below:\n1. Primary Request: add retries to the webhook sender.\n"
    "2. Files: src/hooks/sender.py, src/hooks/backoff.py.\n3. Errors: the first test run failed."
)
HERMES_SUMMARY = (
    "[CONTEXT COMPACTION \u2014 REFERENCE ONLY] Earlier turns were compacted into this summary.\n"
    "## Goal\nRetries for the webhook sender.\n## Files\n- src/hooks/sender.py (modified)"
)
CODEX_SUMMARY = "Summary of the work so far: retries added to src/hooks/sender.py; tests were failing."


# --- the agents ---------------------------------------------------------------------------------


def claude_code_steps() -> list[Step]:
    def read(path: str, _i: int) -> Act:
        return Act(f"Reading {path}.", (Call("Read", {"file_path": path}, source_file(path)),))

    bash = lambda cmd, out, code=0: Call("Bash", {"command": cmd}, out, error=code != 0, exit=code)  # noqa: E731
    return coding_steps(
        read,
        Act("Reading the sender, its tests and the callers.", (
            Call("Read", {"file_path": "src/hooks/sender.py"}, source_file("sender", 40)),
            Call("Read", {"file_path": "tests/test_sender.py"}, source_file("test_sender", 40)),
            Call("Grep", {"pattern": "send_event", "path": "src"}, "src/hooks/sender.py:12\nsrc/api/events.py:88"))),
        Act("Running the tests first.", (bash("pytest -q tests/test_sender.py", "Exit code 1\n" + TRACEBACK, 1),)),
        [Act("Adding a backoff helper and the retry loop.", (
            Call("Write", {"file_path": "src/hooks/backoff.py", "content": BACKOFF},
                 "File created successfully at: src/hooks/backoff.py"),
            Call("Edit", {"file_path": "src/hooks/sender.py", "old_string": SENDER_OLD, "new_string": SENDER_NEW},
                 "The file src/hooks/sender.py has been updated."))),
         Act("Two settings in the config module.", (
             Call("MultiEdit", {"file_path": "src/hooks/config.py", "edits": [
                 {"old_string": "RETRIES = 0", "new_string": "RETRIES = 3"},
                 {"old_string": "TIMEOUT = 10", "new_string": "TIMEOUT = 2.5"}]},
                  "Applied 2 edits to src/hooks/config.py"),
             Call("NotebookEdit", {"notebook_path": "notebooks/retry_timing.ipynb", "cell_id": "c3",
                                   "new_source": "plot(delays(5))"}, "Updated cell c3"))),
         Act("Checking the retry policy module.", (
             Call("Read", {"file_path": "src/hooks/retry_policy.py"}, TOOL_ERROR, error=True),))],
        Act("Running the tests again.", (bash("pytest -q tests/test_sender.py", "Exit code 1\n" + IMPORT_ERROR, 1),)),
        Act("Building the package.", (bash("make build", long_log()),)),
        [Act("The import path was wrong; fixed, running again.", (bash("pytest -q tests/test_sender.py", PASSED),))],
        summary=Injected(CC_SUMMARY, "summary"),
    )


def codex_steps() -> list[Step]:
    def shell(cmd: str, out: str, code: int = 0) -> Call:
        return Call("shell", {"command": ["bash", "-lc", cmd]}, out, error=code != 0, exit=code)

    def read(path: str, _i: int) -> Act:
        return Act("", (shell(f"sed -n 1,200p {path}", source_file(path)),))

    patch = ("*** Begin Patch\n*** Add File: src/hooks/backoff.py\n+" + BACKOFF.replace("\n", "\n+").rstrip("+")
             + "*** Update File: src/hooks/sender.py\n@@\n-" + SENDER_OLD.replace("\n", "\n-").rstrip("-")
             + "+" + SENDER_NEW.replace("\n", "\n+").rstrip("+") + "*** End Patch")
    return coding_steps(
        read,
        Act("Looking at the sender and its tests.", (
            shell("sed -n 1,120p src/hooks/sender.py", source_file("sender", 40)),
            shell("sed -n 1,120p tests/test_sender.py", source_file("test_sender", 40)),
            shell("rg -n send_event src", "src/hooks/sender.py:12"))),
        Act("Running the tests.", (shell("pytest -q tests/test_sender.py", TRACEBACK, 1),)),
        [Act("Applying the retry patch.", (Call("apply_patch", {"input": patch},
                                                "Success. Updated the following files:\nA src/hooks/backoff.py\n"
                                                "M src/hooks/sender.py"),)),
         Act("", (shell("cat src/hooks/retry_policy.py",
                        "cat: src/hooks/retry_policy.py: No such file or directory", 1),))],
        Act("Rerunning.", (shell("pytest -q tests/test_sender.py", IMPORT_ERROR, 1),)),
        Act("Building.", (shell("make build", long_log()),)),
        [Act("Fixed the import.", (shell("pytest -q tests/test_sender.py", PASSED),))],
        summary=Injected(CODEX_SUMMARY, "summary"),
    )


def responses_steps() -> list[Step]:
    return [s if not isinstance(s, Injected) or s.kind != "summary" else Injected(CODEX_SUMMARY, "handoff")
            for s in codex_steps()]


def hermes_steps() -> list[Step]:
    def terminal(cmd: str, out: str, code: int = 0) -> Call:
        return Call("terminal", {"command": cmd}, out, error=code != 0, exit=code)

    def read(path: str, _i: int) -> Act:
        return Act("", (Call("read_file", {"path": path}, source_file(path)),))

    return coding_steps(
        read,
        Act("Reading both files.", (Call("read_file", {"path": "src/hooks/sender.py"}, source_file("sender", 40)),
                                    Call("read_file", {"path": "tests/test_sender.py"}, source_file("t", 40)))),
        Act("Running the tests.", (terminal("pytest -q tests/test_sender.py", TRACEBACK, 1),)),
        [Act("Writing the helper and patching the sender.", (
            Call("write_file", {"path": "src/hooks/backoff.py", "content": BACKOFF}, '{"bytes_written": 78}'),
            Call("patch", {"path": "src/hooks/sender.py", "old_string": SENDER_OLD, "new_string": SENDER_NEW},
                 '{"success": true, "replacements": 1}'))),
         Act("", (Call("read_file", {"path": "src/hooks/retry_policy.py"}, TOOL_ERROR, error=True),))],
        Act("Again.", (terminal("pytest -q tests/test_sender.py", IMPORT_ERROR, 1),)),
        Act("Building.", (terminal("make build", long_log()),)),
        [Act("Fixed.", (terminal("pytest -q tests/test_sender.py", PASSED),))],
        summary=Injected(HERMES_SUMMARY, "summary"),
    )


def openhands_steps() -> list[Step]:
    def bash(cmd: str, out: str, code: int = 0) -> Call:
        return Call("execute_bash", {"command": cmd}, out, error=code != 0, exit=code)

    def view(path: str) -> Call:
        return Call("str_replace_editor", {"command": "view", "path": f"/workspace/{path}"}, source_file(path))

    return coding_steps(
        lambda path, _i: Act("", (view(path),)),
        Act("Looking around.", (view("src/hooks/sender.py"), view("tests/test_sender.py"))),
        Act("Running the tests.", (bash("cd /workspace && pytest -q tests/test_sender.py", TRACEBACK, 1),)),
        [Act("Creating the helper, then editing the sender.", (
            Call("str_replace_editor", {"command": "create", "path": "/workspace/src/hooks/backoff.py",
                                        "file_text": BACKOFF}, "File created successfully at: /workspace/src/hooks/backoff.py"),
            Call("str_replace_editor", {"command": "str_replace", "path": "/workspace/src/hooks/sender.py",
                                        "old_str": SENDER_OLD, "new_str": SENDER_NEW},
                 "The file /workspace/src/hooks/sender.py has been edited."))),
         Act("", (Call("str_replace_editor", {"command": "view", "path": "/workspace/src/hooks/retry_policy.py"},
                       "ERROR:\nInvalid `path` parameter: /workspace/src/hooks/retry_policy.py. The path does not exist.",
                       error=True),))],
        Act("Again.", (bash("cd /workspace && pytest -q tests/test_sender.py", IMPORT_ERROR, 1),)),
        Act("Building.", (bash("cd /workspace && make build", long_log()),)),
        [Act("Fixed.", (bash("cd /workspace && pytest -q tests/test_sender.py", PASSED),))],
    )


def swe_1x_steps() -> list[Step]:
    def bash(cmd: str, out: str) -> Call:
        return Call("bash", {"command": cmd}, out)  # SWE-agent reports failures only in the text

    def view(path: str) -> Call:
        return Call("str_replace_editor", {"command": "view", "path": f"/testbed/{path}"}, source_file(path))

    steps = coding_steps(
        lambda path, _i: Act("Let me look at it.", (view(path),)),
        Act("Let me look at the sender.", (view("src/hooks/sender.py"),)),
        Act("Let me reproduce.", (bash("cd /testbed && python -m pytest -q tests/test_sender.py", TRACEBACK),)),
        [Act("Creating the helper.", (Call("str_replace_editor", {"command": "create",
                                                                  "path": "/testbed/src/hooks/backoff.py",
                                                                  "file_text": BACKOFF},
                                           "File created successfully at: /testbed/src/hooks/backoff.py"),)),
         Act("Editing the sender.", (Call("str_replace_editor", {"command": "str_replace",
                                                                 "path": "/testbed/src/hooks/sender.py",
                                                                 "old_str": SENDER_OLD, "new_str": SENDER_NEW},
                                          "The file /testbed/src/hooks/sender.py has been edited."),))],
        Act("Rerun.", (bash("cd /testbed && python -m pytest -q tests/test_sender.py", IMPORT_ERROR),)),
        Act("Build.", (bash("cd /testbed && make build", long_log()),)),
        [Act("Submitting.", (Call("submit", {}, "diff --git a/src/hooks/sender.py b/src/hooks/sender.py"),))],
        image=False,
    )
    return steps


def atif_steps() -> list[Step]:
    def bash(cmd: str, out: str) -> Call:
        return Call("bash", {"cmd": cmd}, out)

    return coding_steps(
        lambda path, _i: Act("", (bash(f"cat {path}", source_file(path)),)),
        Act("Looking.", (bash("cat src/hooks/sender.py", source_file("sender", 40)), bash("ls tests", "test_sender.py"))),
        Act("Tests.", (bash("pytest -q tests/test_sender.py", TRACEBACK),)),
        [Act("Writing the helper.", (Call("write_file", {"path": "src/hooks/backoff.py", "content": BACKOFF}, "ok"),))],
        Act("Again.", (bash("pytest -q tests/test_sender.py", IMPORT_ERROR),)),
        Act("Build.", (bash("make build", long_log()),)),
        [Act("Done.", (bash("pytest -q tests/test_sender.py", PASSED),))],
        image=False,
    )


def aider_steps() -> list[Step]:
    return coding_steps(
        lambda path, i: Act(f"Here is {path} reformatted.", (Call("edit", {"path": path, "old": f"x = {i}",
                                                                           "new": source_file(path, 40)}, ""),)),
        Act("I'll start with the sender.", (Call("edit", {"path": "src/hooks/sender.py", "old": SENDER_OLD,
                                                          "new": SENDER_NEW}, ""),)),
        Act("Running the tests.", (Call("run", {}, "Running pytest -q tests/test_sender.py\n" + TRACEBACK),)),
        [Act("Adding the helper.", (Call("edit", {"path": "src/hooks/backoff.py", "old": "", "new": BACKOFF}, ""),))],
        Act("Again.", (Call("run", {}, IMPORT_ERROR),)),
        Act("Build output.", (Call("run", {}, long_log(600)),)),
        [Say("The tests pass now.")],
        image=False,
    )


def swe_0x_steps() -> list[Step]:
    return [s for s in swe_1x_steps() if not isinstance(s, Injected)]


def tau_runs() -> list[list[Step]]:
    def details(code: str) -> Call:
        return Call("get_reservation_details", {"reservation_id": code}, json.dumps({
            "reservation_id": code, "user_id": "mia_lee_2045", "origin": "SFO", "destination": "BOS",
            "flights": [{"flight_number": f"HAT{n:03d}", "date": "2024-05-20", "price": 180 + n} for n in range(30)],
            "payment_history": [{"payment_id": "credit_card_4417", "amount": 940}]}))

    def search(day: int) -> Act:
        return Act("", (Call("search_direct_flight", {"origin": "SFO", "destination": "BOS", "date": f"2024-05-{day}"},
                             json.dumps([{"flight_number": f"HAT{day}{n}", "status": "available", "prices":
                                          {"economy": 150 + n, "business": 700 + n}} for n in range(40)])),))

    run: list[Step] = [
        User("Hi, I want to move reservation ZK81QP to a later flight on May 22, same route."),
        Act("Let me look up your reservations.", (details("ZK81QP"), details("P0T7MA"), details("LLX3D2"))),
        User("Don't use the gift card for the fare difference; use the credit card ending in 4417 instead."),
        Act("", (Call("update_reservation_flights", {"reservation_id": "ZK81QP", "cabin": "economy",
                                                     "flights": ["HAT415"], "payment_id": "credit_card_4417"},
                      "Error: not enough seats on flight HAT415"),)),
        Act("", (Call("update_reservation_flights", {"reservation_id": "ZK81QP", "cabin": "economy",
                                                     "flights": ["HAT417"], "payment_id": "gift_card_88"},
                      "Error: gift card balance is not enough"),)),
        *[search(d) for d in range(10, 30)],
        User("Please book HAT419 then, economy, and add one checked bag."),
        Act("", (Call("update_reservation_flights", {"reservation_id": "ZK81QP", "cabin": "economy",
                                                     "flights": ["HAT419"], "payment_id": "credit_card_4417"},
                      json.dumps({"reservation_id": "ZK81QP", "flights": ["HAT419"], "status": "confirmed"})),)),
        *[search(d) for d in range(1, 9)],
        User("Thank you, that is everything. ###STOP###"),
        Say("You're welcome, have a good flight."),
    ]
    return [run, run[:6] + [User("Actually cancel that request. ###STOP###"), Say("Understood.")]]


# --- the cases ----------------------------------------------------------------------------------

Builder = Callable[[Path], Path]
CASES: dict[str, tuple[Builder, dict[str, int]]] = {
    # name: (write the transcript, the least probes of each category it must yield)
    "claude-code": (lambda d: claude_code(claude_code_steps(), d / "cc.jsonl"),
                    {"errors": 3, "files_modified": 4, "requests": 1, "decisions": 1}),
    "codex": (lambda d: codex(codex_steps(), d / "rollout.jsonl"),
              {"errors": 3, "files_modified": 2, "requests": 1, "failed_commands": 2}),
    "openai-responses": (lambda d: responses(responses_steps(), d / "responses.json"),
                         {"errors": 3, "files_modified": 2, "requests": 1}),
    "hermes-agent": (lambda d: hermes_agent(hermes_steps(), d / "session.json"),
                     {"errors": 3, "files_modified": 2, "requests": 1, "failed_commands": 1}),
    "openhands": (lambda d: openhands(openhands_steps(), d / "trajectory.json"),
                  {"errors": 3, "files_modified": 2, "requests": 1}),
    "swe-agent-1x": (lambda d: swe_agent_1x(swe_1x_steps(), d / "one.traj"),
                     {"errors": 2, "files_modified": 2, "requests": 1}),
    "swe-agent-0x": (lambda d: swe_agent_0x(swe_0x_steps(), d / "zero.traj"), {"errors": 2}),
    "atif": (lambda d: atif(atif_steps(), d / "atif.json"), {"errors": 2, "files_modified": 1, "requests": 1}),
    "aider": (lambda d: aider(aider_steps(), d / ".aider.chat.history.md"),
              {"errors": 2, "files_modified": 2, "requests": 1, "decisions": 1}),
    "tau-bench": (lambda d: tau_bench(tau_runs(), d / "tau.json"), {"errors": 2, "requests": 1, "decisions": 1}),
}


@pytest.fixture(scope="module")
def host() -> SimpleNamespace:
    config = Config()
    return SimpleNamespace(config=config, host=PluginHost.create(config=config))


@pytest.fixture(scope="module")
def runs(host: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    home = tmp_path_factory.mktemp("home")
    for name, (build, _least) in CASES.items():
        path = build(tmp_path_factory.mktemp(name))
        for label, messages, model in read_conversations(path, host=host.host):
            for window in dict.fromkeys([*DEFAULT_WINDOWS, _model_window(host, "compressor", model)]):
                run = evaluate(messages, engine="compressor", context_length=window, config=host.config,
                               host=host.host, model=model, home=home)
                run["label"] = label
                run["_last_out"] = run["_after"][-1]
                run["last_user"] = next((m for m in reversed(messages) if m.get("role") == "user"), None)
                out.setdefault(name, []).append(run)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_format_meets_the_bar_at_every_window(runs: dict[str, list[dict[str, Any]]], name: str) -> None:
    assert len(runs[name]) >= 3, "32k, 64k and the model's window"
    for run in runs[name]:
        where = (name, run["label"], run["context_length"])
        assert run["valid"], (where, run["problems"])
        assert run["last_request_verbatim"], where
        if run["tokens_before"] > 10_000:
            assert run["savings"] > 0.3, (where, run["savings"])
        for category, share in BAR.items():
            counts = run["probes"][category]
            if counts["total"]:
                lost = [loss["probe"] for loss in run["losses"] if loss["category"] == category]
                assert counts["kept"] / counts["total"] >= share, (where, category, counts, lost)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_format_yields_the_probes_it_stresses(runs: dict[str, list[dict[str, Any]]], name: str) -> None:
    least = CASES[name][1]
    for category, count in least.items():
        # at some window (where the free passes leave most of it verbatim, little is condensed)
        totals = [run["probes"][category]["total"] for run in runs[name]]
        assert max(totals) >= count, (name, category, totals)


def test_the_model_windows_follow_the_transcripts_models(runs: dict[str, list[dict[str, Any]]]) -> None:
    windows = {name: sorted({run["context_length"] for run in items}) for name, items in runs.items()}
    assert windows["claude-code"] == [32_000, 64_000, 200_000]
    assert windows["codex"] == [32_000, 64_000, 400_000]
    assert windows["openai-responses"] == [32_000, 64_000, 1_047_576]


def test_a_call_in_flight_at_the_end_stays_as_it_was(runs: dict[str, list[dict[str, Any]]]) -> None:
    for run in runs["hermes-agent"]:
        assert run["valid"], run["problems"]
        last = run["_last_out"]
        assert last["role"] == "assistant" and last["tool_calls"][0]["id"] == "call_pending", run["context_length"]


def test_the_last_user_message_is_the_one_kept_verbatim(runs: dict[str, list[dict[str, Any]]]) -> None:
    for name in ("claude-code", "codex", "hermes-agent", "openhands"):
        assert LAST_REQUEST in json.dumps(runs[name][0]["last_user"]), name
    assert REQUEST and DECISION  # the ingredients the probes look for

"""``hermes-ctx eval`` you can trust (issue 29): counted fit, secrets kept and never printed,
error probes from text evidence, requests only from what the person typed, invented failures,
exit 2 when nothing could be evaluated, each warning once, progress only on a terminal."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Config, ContextEngine, PluginHost, hookimpl
from hermes_core.cli import cli
from hermes_core.tokens import ANTHROPIC_MARGIN, count_tokens, o200k_tokenizer
from hermes_core.transcripts import MISSING_RESULT_TEXT
from hermes_plugins.evaluation import command
from hermes_plugins.evaluation.evidence import failure_line, is_person_request, pasted_tool_output
from hermes_plugins.evaluation.fit import count_fit
from hermes_plugins.evaluation.index import ContextIndex
from hermes_plugins.evaluation.invented import invented_failures
from hermes_plugins.evaluation.probes import derive_probes
from hermes_plugins.evaluation.runner import evaluate

from hypothesis_budget import examples

#: Planted secrets of several families, each written as a person would paste it.
SECRETS = {
    "openai": "sk-proj-Q7v2LmN8pR4sT6uW9xY1zA3bC5dE7fG9",
    "github": "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
    "aws": "AKIAQ7V2LMN8PR4ST6UW",
    "password": "hunter2-Xk9pLm4Qw",
    "url": "s3cr3tPassw0rd",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
SECRET_REQUEST = (
    f"Deploy with key {SECRETS['openai']} and push with {SECRETS['github']}; aws id {SECRETS['aws']}, "
    f"DB_PASSWORD={SECRETS['password']} and postgres://admin:{SECRETS['url']}@db.internal:5432/app, "
    f"header Authorization: Bearer {SECRETS['bearer']} for ticket ORD-55120."
)


def call(ident: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def filler(n: int, start: int = 0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(start, start + n):
        out += [
            {"role": "assistant", "content": "", "tool_calls": [call(f"r{i}", "read_file", path=f"docs/p{i}.md")]},
            {"role": "tool", "tool_call_id": f"r{i}", "content": f"page {i} " + "lorem ipsum dolor " * 300},
        ]
    return out


def secret_session() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Start with the ledger bug."},
        *filler(10),
        {"role": "user", "content": SECRET_REQUEST},
        *filler(20, start=10),
        {"role": "user", "content": "Now run the whole suite please."},
        {"role": "assistant", "content": "Running it."},
    ]


def run_of(messages: list[dict[str, Any]], window: int = 8_000, model: str = "gpt-4o") -> dict[str, Any]:
    return evaluate(messages, engine="compressor", context_length=window, config=Config(),
                    host=PluginHost.create(config=Config()), model=model)


def _write(folder: Path, name: str, messages: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


# --- fits ---------------------------------------------------------------------------------


def test_a_run_that_does_not_fit_is_a_failure_shown_in_the_table_and_the_json(tmp_path: Path) -> None:
    # The latest request is protected and alone larger than the 8k window: no engine can fit it.
    messages = [
        {"role": "user", "content": "Fix the ledger."},
        *filler(10),
        {"role": "user", "content": "Please review this log: " + " ".join(f"event{i} ok" for i in range(12_000))},
    ]
    run = run_of(messages)
    assert run["fits"] is False and run["tokens_counted"] > run["fit_limit"]
    assert any(reason.startswith("does not fit") for reason in run["failed"])
    path = _write(tmp_path, "big.json", messages)
    home = ["--home", str(tmp_path / "home")]
    table = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000"])
    assert table.exit_code == 1, table.output  # a failed run fails the evaluation
    assert "fits (counted/limit)" in table.stdout and " NO " in table.stdout
    assert "FAILED compressor @ 8,000: does not fit" in table.stdout
    assert table.stdout.rstrip().endswith("1 run(s), 1 failed: compressor @ 8,000")
    raw = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000", "--json",
                                   "--model", "gpt-4o"])
    assert json.loads(raw.stdout)["failed_runs"] == 1 and raw.exit_code == 1
    [out] = json.loads(raw.stdout)["files"][0]["runs"]
    assert out["fits"] is False and out["failed"] and out["count_method"] == "exact:o200k_base"


def test_a_run_that_fits_says_so_with_the_count() -> None:
    run = run_of(secret_session())
    assert run["fits"] is True and 0 < run["tokens_counted"] <= run["fit_limit"] < 8_000
    assert "does not fit" not in " ".join(run["failed"])


def test_the_count_is_the_models_own_encoding_and_carries_a_margin_for_others() -> None:
    messages = [{"role": "user", "content": "héllo wörld, count me exactly " * 40},
                {"role": "assistant", "content": "", "tool_calls": [call("a", "terminal", command="ls -la")]}]
    texts = [messages[0]["content"], "terminal", messages[1]["tool_calls"][0]["function"]["arguments"]]
    gpt4 = count_fit(messages, "gpt-4-turbo", 10_000)  # cl100k_base, exact
    assert gpt4["tokens"] == sum(count_tokens(t) for t in texts) + 2 * 4 and gpt4["method"] == "exact:cl100k_base"
    exact = count_fit(messages, "gpt-4o", 10_000)  # o200k_base, shipped offline
    o200k = o200k_tokenizer()
    assert exact["tokens"] == sum(o200k.count(t) for t in texts) + 2 * 4 and exact["method"] == "exact:o200k_base"
    other = count_fit(messages, "claude-opus-4-6", 10_000)
    assert other["tokens"] == int(gpt4["tokens"] * (1 + ANTHROPIC_MARGIN) + 0.999)
    assert "margin" in other["method"] and other["margin"] == ANTHROPIC_MARGIN
    assert count_fit(messages, "gpt-4o", exact["tokens"])["fits"]
    assert not count_fit(messages, "gpt-4o", exact["tokens"] - 1)["fits"]


# --- secrets ------------------------------------------------------------------------------


def test_a_secret_in_a_user_request_is_a_kept_item_and_never_a_probe() -> None:
    run = run_of(secret_session())
    requests = [p for p in run["_probes"] if p.category == "requests"]
    assert any(p.key.startswith("Deploy with key sk-proj-[REDACTED]") for p in requests), requests
    counts = run["probes"]["requests"]
    assert counts["kept"] == counts["total"] >= 1, run["losses"]
    assert run["probes"]["identifiers"]["lost"] == 0, run["losses"]
    keys = " ".join(p.key for p in run["_probes"])
    assert "[REDACTED]" in keys
    for secret in SECRETS.values():
        assert secret not in keys


def test_nothing_eval_prints_holds_a_secret(tmp_path: Path) -> None:
    path = _write(tmp_path, "secret.json", secret_session())
    home = ["--home", str(tmp_path / "home")]
    for extra in ([], ["--json"]):
        result = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000", *extra])
        assert result.exit_code == 0, result.output
        for name, secret in SECRETS.items():
            assert secret not in result.output, name


def test_the_output_boundary_redacts_losses_and_json_whatever_a_probe_held(capsys: pytest.CaptureFixture[str]) -> None:
    run = {"engine": "compressor", "context_length": 8_000, "tokens_after": 10, "tokens_counted": 12,
           "fits": True, "fit_limit": 6_800, "savings": 0.5, "elapsed_ms": 1.0, "valid": True,
           "invented_failures": 0, "invented": [], "failed": [], "last_request_verbatim": True,
           "probes": {c: {"total": 0, "kept": 0, "recoverable": 0, "lost": 0} for c in command.CATEGORIES},
           "losses": [{"category": "requests", "probe": f"use {SECRETS['github']} now", "message": 3}]}
    command.render({"files": [{"file": "s.json", "messages": 4, "tokens": 100, "runs": [run]}]})
    printed = capsys.readouterr().out
    assert "most important losses" in printed and SECRETS["github"] not in printed
    assert SECRETS["openai"] not in json.dumps(command.redacted({"a": [{"b": SECRETS["openai"]}]}))


# --- error probes from text evidence; requests only from the person ----------------------


def test_error_probes_come_from_text_evidence_where_no_flag_exists() -> None:
    messages = [
        {"role": "user", "content": "Make the tests pass."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "bash", command="pytst -q")]},
        {"role": "tool", "tool_call_id": "a", "content": "bash: pytst: command not found"},
        {"role": "assistant", "content": "", "tool_calls": [call("b", "bash", command="make build")]},
        {"role": "tool", "tool_call_id": "b", "content": "cc -o app main.c\nmake: *** [app] Error 1\nexit code: 2"},
        {"role": "assistant", "content": "", "tool_calls": [call("c", "bash", command="ls")]},
        {"role": "tool", "tool_call_id": "c", "content": "README.md\nsrc"},
        # mini-swe-agent: the observation is a user turn opening with the return code.
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nTraceback (most recent call last):\n"
                                    '  File "app.py", line 3, in <module>\nZeroDivisionError: division by zero\n</output>'},
        # Cline: a tool's result is the next user turn.
        {"role": "user", "content": "[execute_command for 'npm test'] Result:\nError: Cannot find module 'jest'"},
    ]
    probes = derive_probes(messages, set(range(len(messages))))
    errors = {p.key for p in probes if p.category == "errors"}
    assert "bash: pytst: command not found" in errors
    assert any("ZeroDivisionError: division by zero" in e for e in errors)
    assert any("Cannot find module 'jest'" in e for e in errors)
    assert [p.index for p in probes if p.category == "errors"] == [2, 4, 7, 8]  # not the ls at 6
    assert not any("README" in e for e in errors)
    assert {p.key for p in probes if p.category == "failed_commands"} >= {"pytst -q", "make build"}
    assert [p.key for p in probes if p.category == "requests"] == ["Make the tests pass."]


def test_no_result_recorded_is_no_error_probe() -> None:
    messages = [
        {"role": "user", "content": "Run it."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "bash", command="make")]},
        {"role": "tool", "tool_call_id": "a", "content": MISSING_RESULT_TEXT, "_is_error": True},
    ]
    probes = derive_probes(messages, {0, 1, 2})
    assert not [p for p in probes if p.category in ("errors", "failed_commands")]
    assert failure_line(MISSING_RESULT_TEXT, is_error=True) is None


@pytest.mark.parametrize("message", [
    {"role": "user", "content": "Installed 3 packages in 2s", "_injected": "local-command-output"},
    {"role": "user", "content": "make: *** [all] Error 2", "_injected": "aider-output"},
    {"role": "user", "content": "<system-reminder>Use the todo list.</system-reminder>"},
    {"role": "user", "content": "[read_file for 'src/app.py'] Result:\nimport os\n"},
    {"role": "user", "content": "[attempt_completion] Result:\nThe user has provided feedback."},
    {"role": "user", "content": "<returncode>0</returncode>\n<output>\nok\n</output>"},
    {"role": "user", "content": "OBSERVATION:\nFile updated."},
    {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks, found 2 actions."},
    {"role": "user", "content": "<environment_details>\n# VSCode Open Tabs\nsrc/app.ts\n</environment_details>"},
])
def test_injected_text_and_pasted_tool_output_are_not_requests(message: dict[str, Any]) -> None:
    assert not is_person_request(message)
    probes = derive_probes([message], {0})
    assert not [p for p in probes if p.category in ("requests", "decisions", "identifiers")]


def test_a_person_request_stays_one() -> None:
    message = {"role": "user", "content": "Why does [read_file] fail? Result: unclear, please look."}
    assert pasted_tool_output(message["content"]) is None and is_person_request(message)


# --- invented failures --------------------------------------------------------------------


def test_an_error_item_without_evidence_is_counted_invented() -> None:
    before = [
        {"role": "user", "content": "Build it."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "bash", command="make"),
                                                           call("b", "bash", command="pytest")]},
        {"role": "tool", "tool_call_id": "a", "content": MISSING_RESULT_TEXT, "_is_error": True},
        {"role": "tool", "tool_call_id": "b", "content": "E   AssertionError: totals differ\n1 failed in 0.2s\n"
                                                          "exit code: 1"},
    ]
    summary = {"role": "user", "content": (
        "[HANDOFF NOTES]\n## Errors\n"
        f"- `make` -> failed: {MISSING_RESULT_TEXT} — still failing\n"
        "- `pytest` -> exit 1: E AssertionError: totals differ — still failing\n"
        "- `ruff check` -> exit 1: F401 unused import — resolved\n"
        "## Files\n- src/a.py — modified (write_file)\n")}
    invented = invented_failures(before, [summary])
    assert len(invented) == 2
    assert any(MISSING_RESULT_TEXT in item for item in invented)
    assert any("ruff check" in item for item in invented)
    assert invented_failures(before, [{"role": "user", "content": "## Errors\n- prose, no status"}]) == []


def test_the_run_counts_no_invented_failure_on_evidence() -> None:
    run = run_of(secret_session())
    assert run["invented_failures"] == 0 and run["valid"]


# --- the command: exit 2, warnings once, progress -----------------------------------------


def test_an_empty_folder_is_exit_2_saying_why(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "eval", str(tmp_path / "empty")])
    assert result.exit_code == 2
    assert "no transcript files in the folder" in result.stderr and "Traceback" not in result.output


def test_a_folder_where_nothing_can_be_read_is_exit_2_one_line_per_file(tmp_path: Path) -> None:
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "a.json").write_text("{not json", encoding="utf-8")
    (folder / "b.jsonl").write_text("nope\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "eval", str(folder)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert sum("a.json" in line for line in lines) == 1 and sum("b.jsonl" in line for line in lines) == 1
    assert any(line.startswith("Error: no file could be evaluated") for line in lines)
    assert result.stdout == ""


def test_a_bad_file_beside_a_good_one_is_one_warning_and_exit_0(tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    _write(folder, "good.json", secret_session())
    (folder / "bad.json").write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "eval", str(folder),
                                      "--context-length", "8000", "--context-length", "16000"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("bad.json") == 1 and "good.json" in result.stdout
    # every warning line of the run once
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == len(set(warnings))


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = io.StringIO()
    monkeypatch.setattr(command, "_stderr", lambda: plain)
    with command.progress(2) as bar:
        bar.show("a.json compressor @ 8,000")
        bar.file_done()
    assert plain.getvalue() == ""
    terminal = _Terminal()
    monkeypatch.setattr(command, "_stderr", lambda: terminal)
    with command.progress(2) as bar:
        bar.show(f"a.json {SECRETS['openai']}")
        bar.file_done()
        bar.file_done()
    shown = terminal.getvalue()
    assert "eval" in shown and "100%" in shown and SECRETS["openai"] not in shown


# --- the index answers exactly what a scan would -----------------------------------------

_WORDS = st.sampled_from(["a", "ab", "abc", "b", "ba", "c", "x.py", "err:", "ab-c"])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_WORDS, max_size=30), st.lists(_WORDS, min_size=1, max_size=5), st.text("abc ", max_size=3))
def test_the_context_index_is_a_substring_test(text_words: list[str], key_words: list[str], cut: str) -> None:
    text = " ".join(text_words)
    index = ContextIndex(text)
    key = " ".join(key_words)
    for probe in (key, key[1:], key[:-1], cut + key, " ".join(text_words[2:6])):
        probe = " ".join(probe.split())
        assert (probe in index) == (probe in text), (probe, text)


# --- recall through the session's own archive ---------------------------------------------


def test_what_the_window_engine_drops_is_recoverable_from_the_archive_json_and_secrets_too() -> None:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Start with the ledger bug."},
        *filler(6),
        {"role": "user", "content": SECRET_REQUEST},
        {"role": "assistant", "content": "", "tool_calls": [call("t1", "terminal", command="pytest -k ledger -q")]},
        {"role": "tool", "tool_call_id": "t1", "content": json.dumps({
            "output": "x\n" * 50 + 'Traceback (most recent call last):\n  File "src/ledger.py", line 4, in post\n'
                      "KeyError: \"currency_code\"\n", "exit_code": 1})},
        *filler(24, start=6),
        {"role": "user", "content": "Now run the whole suite please."},
        {"role": "assistant", "content": "Running it."},
    ]
    run = evaluate(messages, engine="window", context_length=8_000, config=Config(),
                   host=PluginHost.create(config=Config()), model="gpt-4o")
    assert run["recall_available"]
    errors = run["probes"]["errors"]
    assert errors["total"] == 1 and errors["recoverable"] == 1, run["losses"]  # quoted in JSON, read decoded
    assert run["probes"]["failed_commands"]["recoverable"] == 1  # found in the call's arguments
    assert run["probes"]["requests"]["lost"] == 0 and run["probes"]["requests"]["recoverable"] >= 1
    assert sum(c["lost"] for c in run["probes"].values()) == 0, run["losses"]


class _Inventor(ContextEngine):
    """Condenses the middle into a summary that states a failure no result shows."""

    name = "inventor"

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False) -> list[dict[str, Any]]:
        summary = {"role": "user", "content": (
            "[HANDOFF NOTES]\n## Errors\n"
            f"- `make` -> failed: {MISSING_RESULT_TEXT} — still failing\n"
            "- `pytest` -> exit 1: E AssertionError: totals differ — still failing\n")}
        return [messages[0], summary, {"role": "assistant", "content": "Noted."}, *messages[-2:]]


class _InventorPlugin:
    @hookimpl
    def hermes_context_engines(self) -> dict[str, type[ContextEngine]]:
        return {"inventor": _Inventor}


def test_a_run_whose_summary_invents_a_failure_fails_and_shows_it(capsys: pytest.CaptureFixture[str]) -> None:
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Build and test."},
        {"role": "assistant", "content": "", "tool_calls": [call("a", "bash", command="make"),
                                                           call("b", "bash", command="pytest")]},
        {"role": "tool", "tool_call_id": "a", "content": MISSING_RESULT_TEXT, "_is_error": True},
        {"role": "tool", "tool_call_id": "b", "content": "E   AssertionError: totals differ\nexit code: 1"},
        *filler(3),
        {"role": "user", "content": "Carry on."},
        {"role": "assistant", "content": "On it."},
    ]
    host = PluginHost.create(config=Config(), plugins=[(_InventorPlugin(), "inventor")])
    run = evaluate(messages, engine="inventor", context_length=8_000, config=Config(), host=host, model="gpt-4o")
    assert run["invented_failures"] == 1 and MISSING_RESULT_TEXT in run["invented"][0]
    assert "1 invented failure(s)" in run["failed"]
    run.pop("_after")
    run.pop("_probes")
    command.render({"files": [{"file": "s.json", "messages": len(messages), "tokens": 1, "runs": [run]}]})
    shown = capsys.readouterr().out
    assert "FAILED inventor @ 8,000: 1 invented failure(s)" in shown and "- invented: `make`" in shown


def test_warnings_from_anywhere_are_printed_once_and_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.diagnostics import record_warning

    real = command.read_conversations

    def noisy(path: Path, *args: Any, **kwargs: Any) -> Any:
        # A reader's note quoting the transcript, recorded again for every file.
        record_warning("reader_note", f"odd header with token {SECRETS['github']}", plugin="transcripts")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(command, "read_conversations", noisy)
    folder = tmp_path / "two"
    _write(folder, "a.json", secret_session())
    _write(folder, "b.json", secret_session())
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "eval", str(folder), "--context-length", "8000"])
    assert result.exit_code == 0, result.output
    assert result.stderr.count("odd header with token ghp_[REDACTED") == 1  # keyed or plain placeholder
    assert SECRETS["github"] not in result.output


def test_a_file_with_no_conversation_says_so_and_alone_is_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    path.write_text("[]", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path / "h"), "eval", str(path), "--format", "tau-bench"])
    assert result.exit_code == 2, result.output
    assert result.stderr.count("runs.json") == 1 and "Traceback" not in result.output

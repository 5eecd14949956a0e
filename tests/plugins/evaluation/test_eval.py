"""``hermes-ctx eval``: probes from the condensed part, kept / recoverable / lost, --json, --judge."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import Config, PluginHost, hookimpl
from hermes_core.cli import cli
from hermes_plugins.evaluation.probes import derive_probes
from hermes_plugins.evaluation.runner import condensed_indices, context_text, evaluate

from fake_llm_servers import openai_completion, running

TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "src/payments/ledger.py", line 41, in post\n'
    "KeyError: 'currency_code'\n"
)


def call(ident: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def session_messages(filler: int = 30) -> list[dict[str, Any]]:
    """A small coding session: a request, a decision, a failed test run, a file written, filler."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the ledger bug in order ORD-48213. Never touch the migrations folder."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal", command="pytest -k ledger")]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps(
            {"output": "x\n" * 300 + TRACEBACK, "exit_code": 1, "error": None})},
        {"role": "assistant", "content": "", "tool_calls": [
            call("c2", "write_file", path="src/payments/currency.py", content="CODES = {}\n" * 40)]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"bytes_written": 440}'},
        {"role": "user", "content": "<system-reminder>Remember the todo list.</system-reminder>"},
    ]
    for i in range(filler):
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [call(f"r{i}", "read_file", path=f"docs/page{i}.md")]},
            {"role": "tool", "tool_call_id": f"r{i}", "content": f"page {i} " + "lorem ipsum dolor " * 300},
        ]
    messages += [{"role": "user", "content": "Now run the whole suite please."},
                 {"role": "assistant", "content": "Running it."}]
    return messages


def test_probes_come_from_structure_and_only_from_condensed_messages() -> None:
    messages = session_messages(2)
    probes = derive_probes(messages, set(range(len(messages))))
    by = {(p.category, p.key) for p in probes}
    assert ("errors", "KeyError: 'currency_code'") in by
    assert ("failed_commands", "pytest -k ledger") in by
    assert ("files_modified", "src/payments/currency.py") in by
    assert ("decisions", "Never touch the migrations folder.") in by
    assert ("identifiers", "ORD-48213") in by
    assert ("requests", "Fix the ledger bug in order ORD-48213. Never touch the migrations folder.") in by
    # an injected reminder is not a request; a file that was only read is not modified
    assert not any("system-reminder" in key for _c, key in by)
    assert not any(key.startswith("docs/") for c, key in by if c == "files_modified")
    assert derive_probes(messages, {0, 1}) == [p for p in probes if p.index == 1]


def test_condensed_means_not_in_the_output_unchanged() -> None:
    before = [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""},
              {"role": "assistant", "content": ""}, {"role": "user", "content": "b"}]
    after = [{"role": "user", "content": "[summary]"}, {"role": "assistant", "content": ""},
             {"role": "user", "content": "b"}]
    assert condensed_indices(before, after) == {0, 1}


def test_context_text_reads_arguments_and_json_results() -> None:
    text = context_text([
        {"role": "assistant", "content": "", "tool_calls": [call("c", "patch", path="a/b.py")]},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps({"output": 'Could not resolve "js/app.js"'})},
    ])
    assert "a/b.py" in text and 'Could not resolve "js/app.js"' in text


def test_evaluate_scores_kept_and_lost_and_checks_the_output() -> None:
    host = PluginHost.create(config=Config(), blocked=["recall"])
    run = evaluate(session_messages(), engine="compressor", context_length=8_000, config=Config(), host=host)
    assert run["valid"] and run["last_request_verbatim"]
    assert run["tokens_after"] < run["tokens_before"]
    for category, counts in run["probes"].items():
        assert counts["kept"] + counts["recoverable"] + counts["lost"] == counts["total"], category
    assert run["probes"]["errors"] == {"total": 1, "kept": 1, "recoverable": 0, "lost": 0}
    assert run["probes"]["files_modified"]["kept"] == 1
    assert not run["recall_available"]  # with the recall plugin blocked nobody answers context_search


def test_a_probe_lost_from_context_but_found_in_the_archive_is_recoverable() -> None:
    messages = session_messages()
    archive = "\n".join(json.dumps(m) for m in messages)

    class Archive:
        @hookimpl
        def hermes_tool_call(self, name: str, arguments: Any, ctx: Any) -> Any:
            if name == "context_search":
                query = arguments["query"]
                hits = [{"ref": "m1", "role": "user", "tool": None, "turn": 1, "snippet": query[:20]}]
                return json.dumps({"hits": hits if query in archive or query in archive.replace('\\"', '"') else []})
            if name == "context_expand":
                return json.dumps({"ref": arguments["ref"], "text": archive.replace('\\"', '"').replace("\\n", "\n")})
            return None

    host = PluginHost.create(config=Config(), plugins=[(Archive(), "fake_recall")], blocked=["recall"])
    # The window engine drops the middle: what it drops is lost unless the archive finds it.
    run = evaluate(messages, engine="window", context_length=8_000, config=Config(), host=host)
    assert run["recall_available"]
    lost = sum(c["lost"] for c in run["probes"].values())
    recoverable = sum(c["recoverable"] for c in run["probes"].values())
    assert recoverable > 0 and lost == 0


def _write(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    return path


def test_cli_table_and_json(tmp_path: Path) -> None:
    path = _write(tmp_path, session_messages())
    home = ["--home", str(tmp_path / "home")]
    table = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000"], catch_exceptions=False)
    assert table.exit_code == 0, table.output
    assert "compressor" in table.output and "8,000" in table.output and "err k/r/l" in table.output
    raw = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000",
                                   "--context-length", "16000", "--json"], catch_exceptions=False)
    report = json.loads(raw.output)
    runs = report["files"][0]["runs"]
    assert [r["context_length"] for r in runs] == [8_000, 16_000]
    assert set(runs[0]) >= {"engine", "tokens_before", "tokens_after", "savings", "elapsed_ms", "valid",
                            "probes", "losses", "last_request_verbatim"}
    assert "_after" not in runs[0]


def test_cli_unreadable_file_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "eval", str(bad)])
    assert result.exit_code == 2 and "cannot read the transcript" in result.output


def test_judge_asks_the_configured_provider_and_scores_against_the_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    path = _write(tmp_path, session_messages())
    home = tmp_path / "home"
    home.mkdir()
    with running("openai") as server:
        (home / "config.yaml").write_text(
            "compression:\n  summary:\n    provider: openai\n    model: judge-model\n"
            f"    base_url: {server.base_url}\n", encoding="utf-8")
        server.push(openai_completion("## Completed actions\n1. ran the tests"), openai_completion(
            "## failures\nThe test run failed: KeyError: 'currency_code' in the ledger.\n"
            "## files\n- src/payments/currency.py\n## next\nunknown"))
        result = CliRunner().invoke(cli, ["--home", str(home), "eval", str(path), "--context-length", "8000",
                                          "--judge", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    judge = json.loads(result.output)["files"][0]["runs"][0]["judge"]
    assert judge["scores"] == {"failures": 1.0, "files": 1.0, "next": 0.0}
    prompt = server.requests[1].json()["messages"][0]["content"]
    assert "What failed, and why?" in prompt and "Now run the whole suite please." in prompt


def test_judge_without_an_llm_provider_is_a_clear_error(tmp_path: Path) -> None:
    path = _write(tmp_path, session_messages(2))
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "eval", str(path), "--judge"])
    assert result.exit_code == 2 and "--judge needs an LLM summary provider" in result.output


def test_cli_compares_engines_and_rejects_an_unknown_one(tmp_path: Path) -> None:
    path = _write(tmp_path, session_messages())
    home = ["--home", str(tmp_path / "home")]
    raw = CliRunner().invoke(cli, [*home, "eval", str(path), "--engine", "compressor,window",
                                   "--context-length", "8000", "--json"], catch_exceptions=False)
    runs = json.loads(raw.output)["files"][0]["runs"]
    assert [r["engine"] for r in runs] == ["compressor", "window"]
    # the window engine drops what it cuts: the same probes, fewer kept
    kept = [sum(c["kept"] for c in r["probes"].values()) for r in runs]
    assert kept[0] > kept[1]
    bad = CliRunner().invoke(cli, [*home, "eval", str(path), "--engine", "nosuch"])
    assert bad.exit_code == 2 and "nosuch" in bad.output


def _tau_list(tmp_path: Path) -> Path:
    """A hand-made tau-bench result list of two runs (ids reused inside each run)."""
    def run(task: int, request: str) -> dict[str, Any]:
        traj: list[dict[str, Any]] = [{"role": "system", "content": "Airline policy."},
                                      {"role": "user", "content": request}]
        for i in range(12):
            traj += [{"role": "assistant", "content": None, "tool_calls": [
                call("call_a", "get_reservation_details", reservation_id=f"R{task}X{i:02d}")]},
                {"role": "tool", "tool_call_id": "call_a", "name": "get_reservation_details",
                 "content": json.dumps({"reservation_id": f"R{task}X{i:02d}", "flights": ["HAT001"] * 40})}]
        traj += [{"role": "user", "content": f"Thanks, that is all for task {task}."},
                 {"role": "assistant", "content": "Glad to help."}]
        return {"task_id": task, "trial": 0, "reward": 1.0, "info": {}, "traj": traj}

    path = tmp_path / "tau.json"
    path.write_text(json.dumps([run(0, "Cancel reservation R0X00 please."),
                                run(1, "Upgrade reservation R1X03 to business.")]), encoding="utf-8")
    return path


def test_cli_index_and_format_select_the_conversation(tmp_path: Path) -> None:
    path = _tau_list(tmp_path)
    home = ["--home", str(tmp_path / "home")]
    both = CliRunner().invoke(cli, [*home, "eval", str(path), "--context-length", "8000", "--json"],
                              catch_exceptions=False)
    assert both.exit_code == 0, both.output
    labels = [item["file"] for item in json.loads(both.output)["files"]]
    assert labels == [f"{path}#0", f"{path}#1"]  # the N of --index N
    one = CliRunner().invoke(cli, [*home, "eval", str(path), "--index", "1", "--format", "tau-bench",
                                   "--context-length", "8000", "--json"], catch_exceptions=False)
    assert one.exit_code == 0, one.output
    files = json.loads(one.output)["files"]
    assert [item["file"] for item in files] == [f"{path}#1"]
    assert files[0] == json.loads(both.output)["files"][1] | {"runs": files[0]["runs"]}
    table = CliRunner().invoke(cli, [*home, "eval", str(path), "--index", "0", "--context-length", "8000"])
    assert table.exit_code == 0 and f"{path}#0" in table.output and f"{path}#1" not in table.output


def test_cli_unknown_format_or_index_out_of_range_is_exit_2(tmp_path: Path) -> None:
    path = _tau_list(tmp_path)
    home = ["--home", str(tmp_path / "home")]
    fmt = CliRunner().invoke(cli, [*home, "eval", str(path), "--format", "nosuch"])
    assert fmt.exit_code == 2 and "unknown transcript format 'nosuch'" in fmt.output and "tau-bench" in fmt.output
    wrong = CliRunner().invoke(cli, [*home, "eval", str(path), "--format", "swe-agent"])
    assert wrong.exit_code == 2 and "not a valid swe-agent transcript" in wrong.output
    index = CliRunner().invoke(cli, [*home, "eval", str(path), "--index", "5"])
    assert index.exit_code == 2 and "out of range" in index.output
    single = _write(tmp_path, session_messages(2))
    one = CliRunner().invoke(cli, [*home, "eval", str(single), "--index", "1"])
    assert one.exit_code == 2 and "index 1 out of range (0..0, 1 conversation(s))" in one.output
    zero = CliRunner().invoke(cli, [*home, "eval", str(single), "--index", "0", "--context-length", "8000", "--json"])
    assert zero.exit_code == 0 and json.loads(zero.output)["files"][0]["file"] == str(single)


def test_the_model_window_is_the_published_one_of_the_family() -> None:
    from hermes_plugins.evaluation.command import FALLBACK_MODEL_WINDOW, known_window

    assert known_window("claude-opus-4-6") == 200_000
    assert known_window("us.anthropic.claude-3-7-sonnet") == 200_000
    assert known_window("gpt-5.3-codex") == 400_000
    assert known_window("gpt-4o-2024-08-06") == 128_000
    assert known_window("openai/o3-mini") == 200_000
    assert known_window("gpt-4.1-mini") == 1_047_576  # the longer family name wins over "gpt-4"
    assert known_window("replay") == 0 and known_window("foo3") == 0
    assert FALLBACK_MODEL_WINDOW == 128_000


def test_text_agent_observations_yield_error_and_file_probes() -> None:
    messages = [
        {"role": "user", "content": "Fix the pixel handler."},
        {"role": "assistant", "content": "Reproducing.\n```\npython reproduce_bug.py\n```"},
        {"role": "user", "_injected": "observation",
         "content": "Traceback (most recent call last):\nAttributeError: Unable to convert the pixel data\nbash-$"},
        {"role": "user", "_injected": "aider-output", "content": "Applied edit to src/pixel/handler.py\nCommit 1a2b3c4"},
        {"role": "user", "_injected": "observation", "content": "Found 3 matches for handler.py\nbash-$"},
    ]
    by = {(p.category, p.key) for p in derive_probes(messages, set(range(len(messages))))}
    assert ("errors", "AttributeError: Unable to convert the pixel data") in by
    assert ("files_modified", "src/pixel/handler.py") in by
    assert not any(key.startswith(("Found", "Applied")) for _c, key in by)  # output is not a request

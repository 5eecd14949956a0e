"""Writers: OpenAI chat and Anthropic Messages, round-tripped; Anthropic's unique tool_use ids;
``hermes-ctx convert`` and ``hermes-ctx formats``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.cli import cli
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import ReportBuilder, Transcript
from hermes_core.transcripts import read_transcript, write_transcript

from hypothesis_budget import examples
from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def call(ident: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_anthropic_writer_renames_reused_ids_with_their_results() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_1", "ls", {})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a", "_is_error": True},
        {"role": "assistant", "content": None, "tool_calls": [call("call_1", "cat", {"f": "a"})]},
        {"role": "tool", "tool_call_id": "call_1", "content": "b"},
    ]
    notes = ReportBuilder()
    body = json.loads(write_transcript(Transcript(messages=messages, system_prompt="sys"), "anthropic", notes=notes))
    assert body["system"] == "sys"
    uses = [b["id"] for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"]
    results = [b for m in body["messages"] for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    assert uses == ["call_1", "call_1__2"]
    assert [r["tool_use_id"] for r in results] == ["call_1", "call_1__2"]
    assert results[0]["is_error"] is True and "is_error" not in results[1]
    assert notes.build().changed == {"duplicate_tool_ids_renamed": 1}
    back = read_transcript(json.dumps(body))
    assert back.format == "anthropic" and pairing_problems(back.messages) == []
    assert back.messages[2]["_is_error"] is True


text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
args = st.dictionaries(st.sampled_from(["path", "q", "n"]), st.one_of(text, st.integers()), max_size=2)


@st.composite
def conversations(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    counter = 0
    for _ in range(draw(st.integers(1, 5))):
        messages.append({"role": "user", "content": draw(text)})
        for _ in range(draw(st.integers(0, 2))):
            calls = []
            for _ in range(draw(st.integers(1, 3))):
                counter += 1
                calls.append(call(f"call_{counter}", draw(st.sampled_from(["ls", "read"])), draw(args)))
            messages.append({"role": "assistant", "content": draw(st.one_of(st.none(), text)), "tool_calls": calls})
            for c in calls:
                result: dict[str, Any] = {"role": "tool", "tool_call_id": c["id"], "content": draw(text)}
                if draw(st.booleans()):
                    result["_is_error"] = True
                messages.append(result)
        messages.append({"role": "assistant", "content": draw(text)})
    return messages


def essence(messages: Any) -> list[tuple[Any, ...]]:
    out = []
    for m in messages:
        calls = tuple((c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                      for c in m.get("tool_calls") or ())
        out.append((m["role"], m.get("content") or None, calls, m.get("tool_call_id"), bool(m.get("_is_error"))))
    return out


@settings(max_examples=examples(60), deadline=None)
@given(conversations(), st.one_of(st.none(), text))
def test_openai_to_anthropic_to_openai_is_lossless(messages: list[dict[str, Any]], system: str | None) -> None:
    original = Transcript(messages=messages, system_prompt=system)
    anthropic = write_transcript(original, "anthropic")
    back = read_transcript(anthropic, "anthropic")
    assert back.system_prompt == system
    assert essence(back.messages) == essence(messages)
    again = read_transcript(write_transcript(back, "openai"), "openai")
    assert essence(again.messages) == essence(messages) and again.system_prompt == system


def test_openai_writer_round_trips_with_model_and_tools() -> None:
    t = read_transcript(DATA / "anthropic.json")
    written = write_transcript(t, "openai")
    back = read_transcript(written)
    assert back.format == "openai" and back.model == t.model and back.tools == t.tools
    assert back.messages == t.messages and back.system_prompt == t.system_prompt


def test_convert_prints_the_report_and_writes_the_target(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = run("convert", str(DATA / "claude_code.jsonl"), "-o", str(out), "--to", "anthropic", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["format"] == "claude-code" and report["unaccounted"] == 0
    assert report["dropped"]["progress"] == 1 and report["written"]["format"] == "anthropic"
    body = json.loads(out.read_text())
    assert body["messages"][0] == {"role": "user", "content": "Fix the failing test in parser.py"}
    human = run("convert", str(DATA / "claude_code.jsonl"))
    assert human.exit_code == 0
    assert json.loads(human.stdout)["messages"][0]["content"] == "Fix the failing test in parser.py"
    assert "as claude-code" in human.stderr and "progress" in human.stderr


def test_convert_multi_run_needs_an_index_and_unknown_input_exits_2(tmp_path: Path) -> None:
    result = run("convert", str(DATA / "tau_bench.json"))
    assert result.exit_code == 2 and "--index" in result.stderr
    ok = run("convert", str(DATA / "tau_bench.json"), "--index", "1")
    assert ok.exit_code == 0 and json.loads(ok.stdout)[0]["content"] == "# Airline Agent Policy"
    junk = tmp_path / "junk.txt"
    junk.write_text("just some notes\n")
    bad = run("convert", str(junk))
    assert bad.exit_code == 2 and "formats tried" in bad.stderr and "Traceback" not in bad.output
    forced = run("convert", str(DATA / "anthropic.json"), "--format", "claude-code")
    assert forced.exit_code == 2 and "Traceback" not in forced.output


def test_formats_lists_readers_and_writers() -> None:
    result = run("formats", "--json")
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    assert {"openai", "anthropic", "claude-code", "codex", "tau-bench"} <= set(rows)
    assert rows["openai"]["writes"] and rows["anthropic"]["writes"] and not rows["claude-code"]["writes"]
    assert rows["claude-code"]["plugin"] == "transcripts"
    table = run("formats")
    assert table.stdout.splitlines()[0].split()[:2] == ["NAME", "WRITES"]


def test_cache_report_reads_any_format() -> None:
    result = run("cache-report", str(DATA / "claude_code.jsonl"), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    # A request after every user message and every batch of tool results.
    t = read_transcript(DATA / "claude_code.jsonl")
    expected = sum(1 for i, m in enumerate(t.messages) if m["role"] == "user" or (
        m["role"] == "tool" and (i + 1 == len(t.messages) or t.messages[i + 1]["role"] != "tool")))
    assert report["total"]["requests"] == expected
    forced = run("cache-report", str(DATA / "anthropic.json"), "--format", "anthropic", "--json")
    assert forced.exit_code == 0 and json.loads(forced.stdout)["total"]["requests"] == 3
    runs = run("cache-report", str(DATA / "tau_bench.json"), "--json")
    assert runs.exit_code == 2 and "--index" in runs.stderr
    assert run("cache-report", str(DATA / "tau_bench.json"), "--index", "0", "--json").exit_code == 0

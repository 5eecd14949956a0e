"""``hermes_core.transcripts``: the API, detection, the report, pairing repair, robust input,
and the OpenAI chat and Claude Code readers (hand-written fixtures in tests/data/transcripts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import InvalidMessagesError, hookimpl
from hermes_core.cli import cli
from hermes_core.errors import HermesPluginError
from hermes_core.host import PluginHost
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    UnknownTranscriptFormatError,
)
from hermes_core.transcripts import (
    load_transcript,
    normalize_pairing,
    read_transcript,
    transcript_formats,
    write_transcript,
)

from hypothesis_budget import examples
from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def call(ident: str, name: str = "read", args: str = "{}") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": args}}


CHAT = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "list files"},
    {"role": "assistant", "content": None, "tool_calls": [call("c1", "ls")]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py", "_is_error": False},
    {"role": "assistant", "content": "Two files."},
]


# --- OpenAI chat ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["array", "object", "jsonl"])
def test_openai_chat_shapes_read_alike(tmp_path: Path, shape: str) -> None:
    path = tmp_path / "t.data"  # no telling extension: detection is by content
    if shape == "array":
        path.write_text(json.dumps(CHAT))
    elif shape == "object":
        path.write_text(json.dumps({"model": "gpt-4o", "messages": CHAT, "tools": [{"type": "function", "function": {"name": "ls"}}]}))
    else:
        path.write_text("\n".join(json.dumps(m) for m in CHAT) + "\n")
    t = read_transcript(path)
    assert t.format == "openai"
    assert t.system_prompt == "You are terse."
    assert list(t.messages) == CHAT[1:]
    assert t.chat_messages() == CHAT
    assert t.conversion is not None
    assert t.conversion.records == 5 and t.conversion.absorbed == {"system_prompt": 1}
    assert t.conversion.unaccounted == 0
    if shape == "object":
        assert t.model == "gpt-4o" and t.tools[0]["function"]["name"] == "ls"


def test_text_input_and_images_become_placeholders_with_their_size() -> None:
    data = "A" * 400  # 300 bytes once decoded
    text = json.dumps([{"role": "user", "content": [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
    ]}])
    t = read_transcript(text)
    part = t.messages[0]["content"][1]
    assert part == {"type": "text", "text": "[image omitted: image/png, 300 bytes]"}
    assert t.conversion is not None and t.conversion.changed["images_replaced_by_placeholders"] == 1


def test_load_transcript_reads_any_format_with_the_system_prompt_first() -> None:
    messages = load_transcript(DATA / "claude_code.jsonl")
    assert messages[0] == {"role": "user", "content": "Fix the failing test in parser.py"}
    assert not pairing_problems(messages)


# --- Claude Code ------------------------------------------------------------------------------


@pytest.fixture
def claude() -> Transcript:
    return read_transcript(DATA / "claude_code.jsonl")


def test_claude_code_records_of_one_response_merge_and_results_follow_their_calls(claude: Transcript) -> None:
    assert claude.format == "claude-code"
    roles = [m["role"] for m in claude.messages]
    assert roles == ["user", "assistant", "tool", "tool", "user", "assistant", "user", "user", "assistant"]
    first = claude.messages[1]
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_A", "toolu_B"]
    assert first["content"] == "I'll read both files."
    assert first["_reasoning"] == "Look at the test first."
    assert json.loads(first["tool_calls"][1]["function"]["arguments"]) == {"file_path": "test_parser.py"}
    assert claude.messages[3]["_is_error"] is True and "_is_error" not in claude.messages[2]
    assert pairing_problems(claude.messages) == []
    assert claude.model == "claude-opus-4-6"
    assert claude.system_prompt is None  # Claude Code stores none


def test_claude_code_markers_for_summaries_and_injections(claude: Transcript) -> None:
    assert claude.messages[4]["_injected"] == "system-reminder"
    assert claude.messages[6]["_summary"] == "claude-code"
    assert claude.messages[7]["_injected"] == "task-notification"
    assert claude.metadata["compactions"] == [
        {"timestamp": "2026-01-01T01:00:00Z", "trigger": "auto", "preTokens": 167731}
    ]
    assert claude.metadata["session_id"] == "s-1"


def test_claude_code_report_accounts_for_every_record(claude: Transcript) -> None:
    report = claude.conversion
    assert report is not None
    assert report.records == len((DATA / "claude_code.jsonl").read_text().splitlines())
    assert report.unaccounted == 0
    assert report.merged == {"assistant_records_of_one_response": 3}
    assert report.dropped == {"duplicate_uuid": 1, "file-history-snapshot": 1, "progress": 1,
                              "queue-operation": 1, "system:turn_duration": 1}
    assert report.absorbed == {"compact_boundary": 1}
    assert report.changed["tool_use_result_duplicates_dropped"] == 2
    assert report.changed["thinking_signatures_dropped"] == 1
    assert report.messages == 9 and report.tool_calls == 2


def test_parallel_results_that_arrive_before_a_later_text_block_still_pair(tmp_path: Path) -> None:
    base = {"sessionId": "s", "parentUuid": None, "isSidechain": False}
    lines = [
        {**base, "type": "user", "uuid": "u0", "message": {"role": "user", "content": "go"}},
        {**base, "type": "assistant", "uuid": "a1", "message": {"id": "m", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}},
        {**base, "type": "assistant", "uuid": "a2", "message": {"id": "m", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]}},
        {**base, "type": "user", "uuid": "u1", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "two"}]}},
        {**base, "type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"}]}},
        {**base, "type": "assistant", "uuid": "a3", "message": {"id": "m", "role": "assistant", "content": [
            {"type": "text", "text": "both done"}]}},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines))
    t = read_transcript(path)
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "tool"]
    assert t.messages[1]["content"] == "both done"
    assert pairing_problems(t.messages) == []


# --- pairing repair ---------------------------------------------------------------------------


def test_normalize_pairing_moves_results_converts_orphans_and_fills_missing() -> None:
    report = ReportBuilder()
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("x"), call("y")]},
        {"role": "tool", "tool_call_id": "x", "content": "X"},
        {"role": "user", "content": "interjection"},
        {"role": "tool", "tool_call_id": "y", "content": "Y"},
        {"role": "tool", "tool_call_id": "zzz", "content": "lost"},
        {"role": "assistant", "content": None, "tool_calls": [call("w")]},
        {"role": "user", "content": "next"},
        {"role": "assistant", "content": None, "tool_calls": [call("p")]},
    ]
    out = normalize_pairing(messages, report)
    assert pairing_problems(out) == []
    assert [m.get("tool_call_id") or m["role"] for m in out] == [
        "user", "assistant", "x", "y", "user", "user", "assistant", "w", "user", "assistant"]
    assert out[5]["_injected"] == "orphan-tool-result" and "lost" in out[5]["content"]
    assert out[7]["_is_error"] is True  # the filled placeholder for w
    built = report.build(out)
    assert built.changed == {"missing_tool_results_filled": 1, "tool_results_moved_after_their_call": 1}
    assert built.relabelled == {"orphan_tool_result_to_user": 1}


def test_an_orphan_result_keeps_its_image() -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    messages = [
        {"role": "user", "content": "go"},
        {"role": "tool", "tool_call_id": "zzz", "content": [{"type": "text", "text": "shot"}, image]},
        {"role": "assistant", "content": "ok"},
    ]
    out = normalize_pairing(messages, ReportBuilder())
    assert out[1]["role"] == "user" and out[1]["_injected"] == "orphan-tool-result"
    assert out[1]["content"] == [{"type": "text", "text": "[tool result 'zzz' answers no call]"},
                                 {"type": "text", "text": "shot"}, image]
    assert pairing_problems(out) == []


def test_reused_ids_stay_as_they_are_and_valid() -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_1")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_1")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "b"},
    ]
    t = read_transcript(json.dumps(messages))
    assert list(t.messages) == messages


# --- detection, errors, robust input ----------------------------------------------------------


def test_unknown_format_lists_every_format_tried_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "weird.json"
    path.write_text(json.dumps({"hello": "world"}))
    with pytest.raises(UnknownTranscriptFormatError) as info:
        read_transcript(path)
    assert set(info.value.refusals) == set(transcript_formats())
    assert all(info.value.refusals.values())
    result = run("compress", str(path))
    assert result.exit_code == 2
    assert "formats tried" in result.stderr and "claude-code:" in result.stderr
    assert "Traceback" not in result.output


def test_a_format_named_explicitly_skips_detection_and_unknown_names_are_errors() -> None:
    t = read_transcript(json.dumps(CHAT), "openai")
    assert t.format == "openai"
    with pytest.raises(InvalidMessagesError, match="unknown transcript format 'nope'"):
        read_transcript(json.dumps(CHAT), "nope")


def test_lone_surrogates_are_kept_escaped_and_never_crash_a_command(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text('[{"role": "user", "content": "bad \\ud800 half"}, {"role": "assistant", "content": "ok \\udfff"}]')
    t = read_transcript(path)
    assert t.messages[0]["content"] == "bad \\ud800 half"
    assert t.conversion is not None and t.conversion.changed["lone_surrogates_escaped"] == 2
    write_transcript(t, "openai").encode("utf-8")
    out = tmp_path / "o.json"
    assert run("convert", str(path), "-o", str(out), "--to", "anthropic").exit_code == 0
    assert "\\ud800" in json.loads(out.read_text(encoding="utf-8"))["messages"][0]["content"]
    assert run("compress", str(path), "--json").exit_code == 0


@pytest.mark.parametrize("command", [("compress", "--json"), ("cache-report", "--json"), ("convert",),
                                     ("convert", "--to", "anthropic")])
@pytest.mark.parametrize("shape", ["array", "jsonl", "object"])
def test_no_command_crashes_on_lone_surrogates(tmp_path: Path, command: tuple[str, ...], shape: str) -> None:
    messages = [{"role": "user", "content": "bad \ud800 half"}, {"role": "assistant", "content": "ok \udfff"},
                {"role": "user", "content": "more \udc80"}]
    body = {"array": json.dumps(messages), "jsonl": "\n".join(json.dumps(m) for m in messages),
            "object": json.dumps({"system": "sys \ud801", "messages": messages})}[shape]
    path = tmp_path / "s.json"
    path.write_text(body)
    assert "\\ud800" in path.read_text()  # the file holds the JSON escape of a lone surrogate
    result = run(command[0], str(path), *command[1:])
    assert result.exit_code == 0, result.output
    result.stdout.encode("utf-8")


def test_invalid_utf8_is_kept_as_escapes(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"role": "user", "content": "caf\xe9"}\n{"role": "assistant", "content": "ok"}\n')
    t = read_transcript(path)
    assert t.messages[0]["content"] == "caf\\xe9"
    assert t.conversion is not None and t.conversion.changed["invalid_utf8_escaped"] == 1


def test_deep_json_is_refused_with_a_clear_error_never_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidMessagesError, match="nested too deeply"):
        read_transcript(path)
    result = run("compress", str(path))
    assert result.exit_code == 2 and "nested too deeply" in result.stderr
    lines = tmp_path / "deep.jsonl"
    lines.write_text(json.dumps({"role": "user", "content": "a"}) + "\n" + '{"a":' + "[" * 100_000 + "\n")
    result = run("convert", str(lines), "--format", "openai")
    assert result.exit_code == 2 and "nested too deeply" in result.stderr


def test_empty_and_missing_inputs_are_clear_errors(tmp_path: Path) -> None:
    empty = tmp_path / "e.json"
    empty.write_text("  \n")
    with pytest.raises(InvalidMessagesError, match="empty transcript"):
        read_transcript(empty)
    with pytest.raises(InvalidMessagesError, match="cannot read transcript"):
        read_transcript(tmp_path / "missing.json")


# --- a third party's format -------------------------------------------------------------------


class PipeLog:
    """A toy format: lines ``user| text`` / ``bot| text``."""

    @staticmethod
    def detect(source: Any) -> Detection:
        if source.kind == "text" and source.head_text.startswith(("user|", "bot|")):
            return Detection.accept(0.9, "pipe log lines")
        return Detection.refuse("no 'user|' or 'bot|' lines")

    @staticmethod
    def read(source: Any) -> Transcript:
        messages = []
        for line in source.read_text().splitlines():
            who, _, text = line.partition("|")
            source.report.saw()
            source.report.converted()
            messages.append({"role": "user" if who == "user" else "assistant", "content": text.strip()})
        return source.transcript(messages)

    @hookimpl
    def hermes_transcript_formats(self) -> list[TranscriptFormat]:
        return [TranscriptFormat(name="pipelog", description="toy", detect=self.detect, read=self.read)]


def test_a_third_party_format_is_detected_by_content() -> None:
    host = PluginHost.create(plugins=[(PipeLog(), "pipelog")])
    t = read_transcript("user| hi\nbot| hello\n", host=host)
    assert t.format == "pipelog"
    assert [m["content"] for m in t.messages] == ["hi", "hello"]
    assert t.conversion is not None and t.conversion.unaccounted == 0
    assert transcript_formats(host)["pipelog"].plugin == "pipelog"


def test_without_a_host_the_process_shared_host_answers_and_refresh_renews_it() -> None:
    from hermes_core import refresh_plugins

    PluginHost.shared().register(PipeLog(), "pipelog")
    assert read_transcript("user| hi\nbot| hello\n").format == "pipelog"
    assert "pipelog" in transcript_formats()
    refresh_plugins()  # what the next test (or a reinstall) starts from: no leftover format
    assert "pipelog" not in transcript_formats()


def test_a_format_name_declared_twice_is_an_error_naming_both() -> None:
    class Clash:
        @hookimpl
        def hermes_transcript_formats(self) -> list[TranscriptFormat]:
            return [TranscriptFormat(name="openai", description="x", detect=PipeLog.detect, read=PipeLog.read)]

    host = PluginHost.create(plugins=[(Clash(), "clash")])
    with pytest.raises(HermesPluginError, match="'openai' is declared by both"):
        transcript_formats(host)


def test_a_message_that_parses_but_nests_too_deep_is_refused(tmp_path: Path) -> None:
    deep: Any = "x"
    for _ in range(500):  # json parses it; recursive code downstream would not survive it
        deep = [deep]
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"role": "user", "content": "hi", "extra": deep}) + "\n")
    with pytest.raises(InvalidMessagesError, match="nested too deeply"):
        read_transcript(path)
    result = run("compress", str(path))
    assert result.exit_code == 2 and "nested too deeply" in result.stderr


def test_a_100k_line_jsonl_streams_memory_follows_the_messages(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "big.jsonl"
    base = '{"type":"progress","uuid":"p%d","sessionId":"s","data":{"type":"hook_progress"}}\n'
    with path.open("w") as fh:
        fh.write(json.dumps({"type": "user", "uuid": "u", "sessionId": "s",
                             "message": {"role": "user", "content": "go"}}) + "\n")
        for i in range(100_000):
            fh.write(base % i)
    size = path.stat().st_size
    read_transcript(json.dumps(CHAT))  # plugins loaded and modules imported before measuring
    tracemalloc.start()
    try:
        t = read_transcript(path, "claude-code")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert t.conversion is not None and t.conversion.records == 100_001
    assert t.conversion.dropped == {"progress": 100_000} and len(t.messages) == 1
    assert peak < size / 20  # the raw records never pile up


def test_reading_shows_a_progress_bar_only_on_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.cli import transcripts_cmd

    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in CHAT * 300) + "\n")
    monkeypatch.setattr(transcripts_cmd, "PROGRESS_MIN_BYTES", 0)
    quiet = run("convert", str(path), "-o", str(tmp_path / "a.json"))
    assert quiet.exit_code == 0 and "Reading t.jsonl" not in quiet.stderr
    monkeypatch.setattr(transcripts_cmd, "_stderr_is_tty", lambda: True)
    shown = run("convert", str(path), "-o", str(tmp_path / "b.json"))
    assert shown.exit_code == 0 and "Reading t.jsonl" in shown.stderr
    assert "Reading" not in shown.stdout


@st.composite
def messy_histories(draw: Any) -> list[dict[str, Any]]:
    """Calls and results in any order: moved, missing, orphaned, ids reused."""
    ids = st.sampled_from(["a", "b", "c", "call_1"])
    out: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["user", "assistant", "calls", "result", "result"]))
        if kind == "user":
            out.append({"role": "user", "content": "u"})
        elif kind == "assistant":
            out.append({"role": "assistant", "content": "t"})
        elif kind == "calls":
            out.append({"role": "assistant", "content": None,
                        "tool_calls": [call(i) for i in draw(st.lists(ids, min_size=1, max_size=3))]})
        else:
            out.append({"role": "tool", "tool_call_id": draw(ids), "content": "r"})
    return out


@settings(max_examples=examples(150), deadline=None)
@given(messy_histories())
def test_every_read_is_valid_by_the_pairing_rule_and_loses_no_result(messages: list[dict[str, Any]]) -> None:
    t = read_transcript(json.dumps(messages), "openai")
    assert pairing_problems(t.messages) == []
    kept = [m["content"] for m in t.messages if m["role"] == "tool" and m["content"] == "r"]
    orphans = [m for m in t.messages if m.get("_injected") == "orphan-tool-result"]
    assert len(kept) + len(orphans) == sum(1 for m in messages if m["role"] == "tool")
    assert t.conversion is not None and t.conversion.unaccounted == 0

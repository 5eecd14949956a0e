"""Tolerant reading (issue 30): one odd record never refuses a whole file. Records of a format's
own fixtures, with fields replaced by random JSON, unknown record types and roles mixed in, read
without an error, into a valid pairing, every record accounted for. And the errors that remain
(a file in no known format, a file a reader fails midway) name what was tried and where."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import InvalidMessagesError
from hermes_core.cli import cli
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import UnknownTranscriptFormatError
from hermes_core.transcripts import read_transcript, read_transcripts

from hypothesis_budget import examples
from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"

#: Streaming (JSON Lines) formats and a fixture of each whose records are mutated.
LINE_FORMATS = {
    "gemini-cli": ["gemini_stream.jsonl", "gemini_session.jsonl"],
    "qwen-code": ["qwen_session.jsonl"],
    "goose": ["goose_session.jsonl"],
    "codex": ["codex_compacted.jsonl", "codex_exec.jsonl", "codex_legacy.jsonl", "codex_exec_legacy.jsonl"],
    "openhands-jsonl": ["openhands_events.jsonl", "openhands_output.jsonl"],
    "claude-code": ["claude_code.jsonl", "qwen_stream.jsonl"],
}
#: Document formats whose message list is mutated the same way.
LIST_FORMATS = {
    "openai": ("openai_list", None),
    "anthropic": ("anthropic.json", "messages"),
    "mini-swe-agent": ("mini_swe_agent_2x.traj.json", "messages"),
    "cline": ("../cline_task/api_conversation_history.json", None),
    "gemini-cli": ("gemini_checkpoint.json", None),
}

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=8),
                    st.sampled_from(["user", "assistant", "tool", "model", "exit", "gemini", "error",
                                     "text", "tool_use", "toolRequest", "message", "response_item"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["type", "role", "content", "text", "id", "parts", "message", "payload", "item", "args"]), inner, max_size=3)),
    max_leaves=8)


def _lines(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


@st.composite
def mutated(draw: st.DrawFn, records: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for _ in range(draw(st.integers(1, 12))):
        choice = draw(st.integers(0, 9))
        if choice == 0:
            out.append(draw(st.dictionaries(st.text(max_size=6), values, max_size=4)))  # an unknown record
            continue
        record = dict(draw(st.sampled_from(records)))
        for _ in range(draw(st.integers(0, 2))):
            keys = sorted(record) or ["type"]
            record[draw(st.sampled_from(keys))] = draw(values)
        out.append(record)
    return out


def _check(text: str, fmt: str) -> None:
    for transcript in read_transcripts(text.encode(), fmt):
        assert pairing_problems(transcript.messages) == []
        report = transcript.conversion
        assert report is not None and report.unaccounted == 0, report.to_dict()


SETTINGS = settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("fmt", sorted(LINE_FORMATS))
def test_random_record_streams_never_refuse_a_line_format(fmt: str) -> None:
    records = [r for name in LINE_FORMATS[fmt] for r in _lines(name)]

    @SETTINGS
    @given(mutated(records))
    def run(stream: list[Any]) -> None:
        # Line 1 keeps its shape: it is what tells the reader which variant it reads.
        text = "\n".join(json.dumps(r) for r in [records[0], *stream]) + "\n"
        _check(text, fmt)

    run()


@pytest.mark.parametrize("fmt", sorted(LIST_FORMATS))
def test_random_messages_never_refuse_a_document_format(fmt: str) -> None:
    name, key = LIST_FORMATS[fmt]
    if name == "openai_list":
        base: Any = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"},
                     {"role": "function", "name": "f", "content": "x"}]
    else:
        base = json.loads((DATA / name).read_text())
    messages = base if key is None else base[key]
    rolled = [m for m in messages if isinstance(m, dict) and isinstance(m.get("role"), str)]

    @SETTINGS
    @given(mutated(rolled), st.lists(st.sampled_from(["exit", "model", "observation", "critic"]), max_size=2))
    def run(stream: list[Any], odd_roles: list[str]) -> None:
        # Messages keep a role (a message with none is malformed, not tolerated); its value may be odd.
        kept = [rolled[0]]  # one message as written: what tells the reader which format it reads
        kept += [m for m in stream if isinstance(m, dict) and isinstance(m.get("role"), str) and m["role"]]
        kept += [{"role": role, "content": f"a {role} message"} for role in odd_roles]
        doc = kept if key is None else {**base, key: kept}
        try:
            _check(json.dumps(doc), fmt)
        except InvalidMessagesError as exc:
            # A malformed message (not an odd role) may still be refused: then it is named.
            assert "message" in str(exc) or "record" in str(exc), str(exc)

    run()


def test_unknown_roles_become_counted_marked_messages() -> None:
    doc = [{"role": "user", "content": "task"}, {"role": "assistant", "content": "done"},
           {"role": "exit", "content": "Submitted"}, {"role": "critic", "content": ""}]
    t = read_transcript(json.dumps(doc))
    assert t.messages[-1] == {"role": "user", "content": "Submitted", "_injected": "unknown-role", "_role": "exit"}
    report = t.conversion
    assert report is not None and report.unaccounted == 0
    assert report.relabelled["unknown_role_to_user:exit"] == 1
    assert report.dropped == {"unknown_role_without_text:critic": 1}
    anthropic = read_transcript(json.dumps({"system": "s", "messages": [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
        {"role": "system", "content": "mid-run note"}]}))
    assert anthropic.format == "anthropic" and anthropic.messages[-1]["_role"] == "system"


@pytest.mark.parametrize("thinking", [False, True])
def test_nonstandard_tool_blocks_are_mapped_and_counted(thinking: bool) -> None:
    last: Any = "One file."
    if thinking:  # a thinking block makes it an Anthropic-style list: the same mapping applies
        last = [{"type": "thinking", "thinking": "Say how many."}, {"type": "text", "text": "One file."}]
    export = [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_call", "id": "c1", "name": "shell", "arguments": {"command": ["ls"]}}]},
        {"role": "user", "content": [{"type": "tool_output", "call_id": "c1", "output": "a.py"},
                                     {"type": "citation", "source": "x"}]},
        {"role": "assistant", "content": last},
    ]
    t = read_transcript(json.dumps(export))
    assert t.format == ("anthropic" if thinking else "openai")
    assert t.messages[1]["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"command": ["ls"]}'}
    assert t.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "a.py"}
    assert t.messages[3]["content"].startswith("[citation block]")  # unclear: kept as text naming it
    assert t.messages[4]["content"] == "One file."
    report = t.conversion
    assert report is not None and report.unaccounted == 0 and pairing_problems(t.messages) == []
    assert report.changed["nonstandard_blocks_mapped:tool_call"] == 1
    assert report.changed["nonstandard_blocks_mapped:tool_output"] == 1
    assert report.changed["blocks_kept_as_text:citation"] == 1
    if thinking:
        assert t.messages[4]["_reasoning"] == "Say how many."


def test_reasoning_parts_of_chat_messages_become_reasoning() -> None:
    t = read_transcript(json.dumps([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "reasoning", "text": "Greet back."}, {"type": "text", "text": "hello"}]},
        {"role": "tool", "tool_call_id": "x", "content": "stray"},
    ]))
    assert t.format == "openai"
    assert t.messages[1] == {"role": "assistant", "content": "hello", "_reasoning": "Greet back."}
    assert t.conversion is not None and t.conversion.changed["nonstandard_blocks_mapped:reasoning"] == 1


def test_a_file_in_no_known_format_lists_every_format_tried(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"kind": "ping", "n": 1}\n{"kind": "pong", "n": 2}\n')
    with pytest.raises(UnknownTranscriptFormatError) as caught:
        read_transcript(path)
    assert {"openai", "gemini-cli", "goose", "codex", "qwen-code"} <= set(caught.value.refusals)
    result = CliRunner().invoke(cli, ["convert", str(path)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "formats tried" in result.output and "gemini-cli:" in result.output


def test_a_reader_failing_midway_names_the_record_and_the_reader(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text('{"role": "user", "content": "a"}\n{"role": "assistant", "content": "b"}\n{"role": "user", "content": ')
    with pytest.raises(InvalidMessagesError) as caught:
        read_transcript(path)
    assert "line 3 is not JSON" in str(caught.value) and "read as openai" in str(caught.value)
    broken = tmp_path / "chat.json"
    broken.write_text(json.dumps([{"role": "user", "content": "a"}, {"content": "no role"}]))
    with pytest.raises(InvalidMessagesError, match=r"message 1: has no role \(read as openai"):
        read_transcript(broken)


def test_detection_tolerates_record_kinds_of_later_versions() -> None:
    def env(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "t", "type": kind, "payload": payload})

    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    codex = "\n".join([env("session_meta", {"id": "s"}), env("response_item", user),
                       *[env("world_state", {"n": n}) for n in range(3)]]) + "\n"
    t = read_transcript(codex.encode())
    assert t.format == "codex" and t.conversion is not None
    assert t.conversion.dropped == {"unknown:world_state": 3}
    goose = "\n".join(json.dumps(r) for r in [
        {"working_dir": "/w", "description": "d"},
        {"role": "user", "created": 1, "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "created": 2, "content": [{"type": "text", "text": "ok"},
                                                         {"type": "reasoningSummary", "text": "new kind"}]},
    ]) + "\n"
    g = read_transcript(goose.encode())
    assert g.format == "goose" and g.conversion is not None
    assert g.conversion.changed["ui_blocks_dropped:reasoningSummary"] == 1
    stream = "\n".join(json.dumps(r) for r in [
        {"type": "init", "timestamp": "t", "session_id": "s", "model": "m"},
        {"type": "message", "timestamp": "t", "role": "user", "content": "hi"},
        {"type": "thought", "timestamp": "t", "subject": "planning"},
        {"type": "message", "timestamp": "t", "role": "assistant", "content": "ok", "delta": True},
    ]) + "\n"
    s = read_transcript(stream.encode())
    assert s.format == "gemini-cli" and s.conversion is not None and s.conversion.dropped == {"unknown:thought": 1}


@pytest.mark.parametrize("shape", ["jsonl", "json"])
def test_a_chat_file_that_opens_with_an_unknown_role_is_read_not_refused(tmp_path: Path, shape: str) -> None:
    # The first message's role is one no reader knows: the file is still read as OpenAI chat,
    # that message kept as marked user text and counted (tolerant reading, issue 30).
    messages = [{"role": "wizard", "content": "a spell"}, {"role": "user", "content": "do X"},
                {"role": "assistant", "content": "done"}]
    path = tmp_path / f"chat.{shape}"
    path.write_text("\n".join(json.dumps(m) for m in messages) if shape == "jsonl" else json.dumps(messages))
    transcript = read_transcript(path)
    assert transcript.format == "openai"
    first = transcript.messages[0]
    assert first["role"] == "user" and first["_injected"] == "unknown-role" and first["_role"] == "wizard"
    assert [m["content"] for m in transcript.messages[1:]] == ["do X", "done"]

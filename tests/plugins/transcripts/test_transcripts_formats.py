"""Each built-in reader over its hand-written fixture (tests/data/transcripts): detection by
content, the hard cases of the format, a valid pairing and a report that accounts for every
record."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from hermes_core import InvalidMessagesError
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import Transcript
from hermes_core.transcripts import read_transcript, read_transcripts

from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"

EXPECTED_FORMAT = {
    "claude_code.jsonl": "claude-code",
    "codex_rollout.jsonl": "codex",
    "responses.json": "openai-responses",
    "anthropic.json": "anthropic",
    "hermes_session.json": "hermes-agent",
    "swe_agent_0x.traj": "swe-agent",
    "swe_agent_1x.traj": "swe-agent",
    "tau_bench.json": "tau-bench",
    "openhands_trajectory.json": "openhands",
    "aider.chat.history.md": "aider",
    "atif_trajectory.json": "atif",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_every_fixture_is_detected_by_content_valid_and_accounted_for(name: str, tmp_path: Path) -> None:
    anonymous = tmp_path / "input.dat"  # the extension says nothing
    shutil.copy(DATA / name, anonymous)
    for transcript in read_transcripts(anonymous):
        assert transcript.format == EXPECTED_FORMAT[name]
        assert pairing_problems(transcript.messages) == []
        report = transcript.conversion
        assert report is not None and report.unaccounted == 0
        assert report.records > 0 and report.messages == len(transcript.messages)


def roles(t: Transcript) -> list[str]:
    return [m["role"] for m in t.messages]


def test_codex_rollout() -> None:
    t = read_transcript(DATA / "codex_rollout.jsonl")
    assert t.system_prompt == "You are Codex." and t.model == "gpt-5-codex"
    assert t.metadata["session_id"] == "sess-9"
    assert roles(t) == ["user", "user", "assistant", "tool", "tool", "user", "assistant"]
    assert t.messages[0]["_injected"] == "environment-context"
    calls = t.messages[2]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_1", "call_2"]
    assert t.messages[2]["_reasoning"] == "Run pytest first."
    assert t.messages[5] == {"role": "user", "content": "Summary of the work so far: one test fails.", "_summary": "codex"}
    # Shell results arrive as {"output", "metadata": {"exit_code"}} strings: text kept, failure marked.
    assert t.messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": "1 failed", "_is_error": True}
    assert t.messages[4] == {"role": "tool", "tool_call_id": "call_2", "content": "clean"}
    report = t.conversion
    assert report is not None
    assert report.changed["encrypted_reasoning_dropped"] == 1
    assert report.dropped == {"event_msg:token_count": 1, "event_msg:user_message": 1}
    assert report.absorbed == {"session_meta": 1, "turn_context": 1}
    assert report.merged == {"calls_of_one_response": 1, "reasoning_into_assistant_message": 1}


def test_responses_items() -> None:
    t = read_transcript(DATA / "responses.json")
    assert t.system_prompt == "Be brief." and t.model == "gpt-4.1"
    assert roles(t) == ["user", "assistant", "tool", "assistant", "user"]
    assert t.messages[1]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city":"Paris"}'}
    assert t.messages[4]["content"][1] == {"type": "text", "text": "[image omitted: image/jpeg, 3 bytes]"}
    assert t.conversion is not None and t.conversion.dropped == {"item:web_search_call": 1}


def test_anthropic_messages() -> None:
    t = read_transcript(DATA / "anthropic.json")
    assert t.system_prompt == "You are helpful." and t.model == "claude-sonnet-4"
    assert t.tools[0]["function"]["name"] == "grep"
    assert roles(t) == ["user", "assistant", "tool", "tool", "user", "assistant"]
    assistant = t.messages[1]
    assert assistant["content"] == "Searching." and assistant["_reasoning"] == "grep it"
    assert [c["id"] for c in assistant["tool_calls"]] == ["toolu_1", "toolu_2"]
    assert t.messages[2]["content"] == "a.py:3 TODO" and "_is_error" not in t.messages[2]
    assert t.messages[3]["_is_error"] is True
    assert t.messages[4]["content"] == [
        {"type": "text", "text": "also check b.py"},
        {"type": "text", "text": "[image omitted: image/png, 8 bytes]"},
    ]
    report = t.conversion
    assert report is not None
    assert report.changed["encrypted_reasoning_dropped"] == 1
    assert report.changed["images_replaced_by_placeholders"] == 1


def test_hermes_agent_session_file() -> None:
    t = read_transcript(DATA / "hermes_session.json")
    assert t.system_prompt == "You are Hermes." and t.model == "gpt-5.3-codex"
    assert t.metadata["platform"] == "cli" and len(t.tools) == 1
    assert t.messages[0]["_summary"] == "hermes-agent"
    call = t.messages[2]
    assert call["_reasoning"] == "Use the terminal."
    assert not {"reasoning", "reasoning_content", "codex_reasoning_items"} & set(call)
    assert t.conversion is not None and t.conversion.changed["codex_reasoning_items_dropped"] == 1


def make_state_db(path: Path) -> None:
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, system_prompt TEXT,
                               parent_session_id TEXT, started_at REAL, title TEXT);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL,
            role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
            timestamp REAL NOT NULL, reasoning TEXT, reasoning_content TEXT,
            codex_reasoning_items TEXT, active INTEGER NOT NULL DEFAULT 1);
        """
    )
    db.execute("INSERT INTO sessions VALUES ('s1', 'cli', 'gpt-5', 'Be Hermes.', NULL, 1.0, 'first')")
    db.execute("INSERT INTO sessions VALUES ('s2', 'telegram', 'gpt-5', NULL, 's1', 2.0, NULL)")
    calls = json.dumps([{"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}])
    rows = [
        ("s1", "user", "hello", None, None, 1.1, None, None, 1),
        ("s1", "assistant", "", None, calls, 1.2, "thinking", json.dumps([{"encrypted_content": "x"}]), 1),
        ("s1", "tool", "ok", "c1", None, 1.3, None, None, 1),
        ("s1", "assistant", "old answer", None, None, 1.35, None, None, 0),
        ("s1", "assistant", "done", None, None, 1.4, None, None, 1),
        ("s2", "user", "second session", None, None, 2.1, None, None, 1),
    ]
    db.executemany(
        "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, timestamp, reasoning,"
        " codex_reasoning_items, active) VALUES (?,?,?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()


def test_hermes_agent_state_db(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    make_state_db(path)
    runs = read_transcripts(path)
    assert [r.format for r in runs] == ["hermes-agent-db", "hermes-agent-db"]
    first = runs[0]
    assert first.system_prompt == "Be Hermes." and first.metadata["title"] == "first"
    assert roles(first) == ["user", "assistant", "tool", "assistant"]
    assert first.messages[1]["_reasoning"] == "thinking"
    assert first.conversion is not None and first.conversion.dropped == {"inactive_rows": 1}
    assert first.conversion.unaccounted == 0
    with pytest.raises(InvalidMessagesError, match="holds 2 conversations"):
        read_transcript(path)
    assert read_transcript(path, options={"session": "s2"}).messages[0]["content"] == "second session"
    assert read_transcript(path, index=1).metadata["id"] == "s2"


def test_swe_agent_0x_marks_the_demonstration() -> None:
    t = read_transcript(DATA / "swe_agent_0x.traj")
    assert t.system_prompt == "SETTING: you are an autonomous programmer."
    assert roles(t) == ["user", "user", "assistant", "user"]
    assert t.messages[0]["_demonstration"] is True
    assert not any("_demonstration" in m for m in t.messages[1:])
    # the task statement is the request; the observation after the action is not
    assert "_injected" not in t.messages[1] and t.messages[3]["_injected"] == "observation"
    assert not any(k in m for m in t.messages for k in ("thought", "action", "agent", "is_demo"))
    assert t.metadata["exit_status"] == "submitted" and t.metadata["swe_agent_version"] == "0.x"
    assert t.conversion is not None and t.conversion.dropped == {"trajectory_steps_repeating_the_history": 1}


def test_swe_agent_1x_keeps_reused_ids_valid() -> None:
    t = read_transcript(DATA / "swe_agent_1x.traj")
    assert roles(t) == ["user", "assistant", "tool", "assistant", "tool"]
    # 1.x labels the instance template (the task statement) an observation: it is the request
    assert "_injected" not in t.messages[0]
    assert [m["tool_call_id"] for m in t.messages if m["role"] == "tool"] == ["call_0", "call_0"]
    assert pairing_problems(t.messages) == []
    assert t.model == "claude-3-7-sonnet" and t.metadata["swe_agent_version"] == "1.x"


def test_tau_bench_runs_by_index_or_all() -> None:
    runs = read_transcripts(DATA / "tau_bench.json")
    assert [r.metadata["task_id"] for r in runs] == [0, 1]
    assert runs[1].metadata["reward"] == 0.0 and runs[1].system_prompt == "# Airline Agent Policy"
    assert [r.conversion.records for r in runs if r.conversion] == [5, 7]
    one = read_transcript(DATA / "tau_bench.json", index=1)
    assert [m.get("tool_call_id") for m in one.messages if m["role"] == "tool"] == ["call_y", "call_y"]
    with pytest.raises(InvalidMessagesError, match="holds 2 conversations"):
        read_transcript(DATA / "tau_bench.json")
    with pytest.raises(InvalidMessagesError, match="out of range"):
        read_transcript(DATA / "tau_bench.json", index=5)


def test_openhands_actions_of_one_response_become_one_assistant_message() -> None:
    t = read_transcript(DATA / "openhands_trajectory.json")
    assert t.system_prompt == "You are OpenHands agent."
    assert roles(t) == ["user", "user", "assistant", "tool", "tool", "assistant"]
    assert t.messages[1]["_injected"] == "recall"
    assistant = t.messages[2]
    assert assistant["content"] == "Let me look around."
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["execute_bash", "str_replace_editor"]
    assert json.loads(assistant["tool_calls"][1]["function"]["arguments"]) == {"command": "view", "path": "/w/a.py"}
    assert t.messages[4]["_is_error"] is True and "_is_error" not in t.messages[3]
    report = t.conversion
    assert report is not None
    assert report.merged == {"actions_of_one_model_response": 1}
    assert report.dropped == {"observation:agent_state_changed": 1}


def test_aider_history() -> None:
    t = read_transcript(DATA / "aider.chat.history.md")
    assert roles(t) == ["user", "user", "assistant", "user", "user", "user", "user", "assistant", "user", "assistant"]
    assert t.messages[0] == {"role": "user", "content": "/usr/local/bin/aider --model gpt-4o\nAider v0.80.0\nGit repo: .git with 12 files", "_injected": "aider-output"}
    assert t.messages[1]["content"] == "add a greet() function to hello.py"
    assert "def greet(name):" in t.messages[2]["content"]
    assert t.messages[4]["content"].startswith("/run python")
    assert t.metadata["sessions_started"] == ["2026-01-05 09:12:44", "2026-01-06 10:00:00"]
    report = t.conversion
    assert report is not None and report.absorbed == {"session_header": 2}


def test_atif_steps() -> None:
    t = read_transcript(DATA / "atif_trajectory.json")
    assert t.system_prompt == "You are a terminal agent." and t.model == "claude-sonnet-4"
    assert t.metadata["agent"] == "terminus" and t.metadata["schema_version"] == "ATIF-v1.4"
    assert roles(t) == ["user", "assistant", "tool", "user", "assistant"]
    call = t.messages[1]
    assert call["_reasoning"] == "Use echo." and call["content"] == "Creating the file."
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"cmd": "echo hi > hello.txt"}
    assert t.messages[3] == {"role": "user", "content": "[terminal screen] $", "_injected": "observation"}

"""The readers of issue 30 over their hand-written fixtures (tests/data/transcripts and the task
folders beside it): detection by content, each format's hard cases, a valid pairing and a
report that accounts for every record."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import InvalidMessagesError
from hermes_core.cli import cli
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import Transcript
from hermes_core.transcripts import read_transcript, read_transcripts

from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"

EXPECTED_FORMAT = {
    "mini_swe_agent_1x.traj.json": "mini-swe-agent",
    "mini_swe_agent_2x.traj.json": "mini-swe-agent",
    "gemini_stream.jsonl": "gemini-cli",
    "gemini_session.jsonl": "gemini-cli",
    "gemini_session_legacy.json": "gemini-cli",
    "gemini_checkpoint.json": "gemini-cli",
    "qwen_session.jsonl": "qwen-code",
    "goose_session.jsonl": "goose",
    "openhands_output.jsonl": "openhands-jsonl",
    "openhands_events.jsonl": "openhands-jsonl",
    "codex_compacted.jsonl": "codex",
    "codex_legacy.jsonl": "codex",
    "codex_exec.jsonl": "codex",
    "codex_exec_legacy.jsonl": "codex",
    "qwen_stream.jsonl": "claude-code",  # Qwen Code's stream-json is Claude Code's SDK shape
}


def roles(t: Transcript) -> list[str]:
    return [m["role"] for m in t.messages]


def accounted(t: Transcript) -> dict[str, Any]:
    assert pairing_problems(t.messages) == []
    report = t.conversion
    assert report is not None and report.unaccounted == 0 and report.messages == len(t.messages)
    return report.to_dict()


@pytest.mark.parametrize("name", sorted(EXPECTED_FORMAT))
def test_every_fixture_is_detected_by_content_valid_and_accounted_for(name: str, tmp_path: Path) -> None:
    anonymous = tmp_path / "input.dat"  # the extension says nothing
    shutil.copy(DATA / name, anonymous)
    runs = read_transcripts(anonymous)
    assert runs
    for transcript in runs:
        assert transcript.format == EXPECTED_FORMAT[name]
        accounted(transcript)


# --- mini-swe-agent ---------------------------------------------------------------------------


def test_mini_swe_agent_1x_observations_are_marked() -> None:
    t = read_transcript(DATA / "mini_swe_agent_1x.traj.json")
    assert t.system_prompt and t.system_prompt.startswith("You are a helpful assistant")
    assert t.model == "claude-sonnet-4" and t.metadata["exit_status"] == "Submitted"
    assert roles(t) == ["user", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert "_injected" not in t.messages[0]  # the task statement stays the request
    assert [m.get("_injected") for m in t.messages if m["role"] == "user"][1:] == ["observation"] * 3
    report = accounted(t)
    assert report["changed"] == {"extra_metadata_dropped": 1}


def test_mini_swe_agent_2x_exit_message_tool_calls_and_format_errors() -> None:
    t = read_transcript(DATA / "mini_swe_agent_2x.traj.json")
    assert t.metadata["mini_swe_agent_version"] == "2.x" and t.metadata["exit_status"] == "Submitted"
    assert all(m.get("_role") != "exit" for m in t.messages)  # the exit record is metadata
    assert roles(t) == ["user", "assistant", "tool", "tool", "assistant", "user", "assistant", "tool"]
    assert t.messages[2]["_is_error"] is True and "_is_error" not in t.messages[3]  # returncode 1 / 0
    assert t.messages[5]["_injected"] == "harness-message"
    report = accounted(t)
    assert report["absorbed"] == {"exit_message": 1, "system_prompt": 1}
    assert all("extra" not in m for m in t.messages)


def test_mini_swe_agent_2x_forced_as_swe_agent_says_what_it_is(tmp_path: Path) -> None:
    with pytest.raises(InvalidMessagesError) as caught:
        read_transcript(DATA / "mini_swe_agent_2x.traj.json", format="swe-agent")
    said = str(caught.value)
    assert "not a valid swe-agent transcript" in said and "detected as mini-swe-agent" in said
    result = CliRunner().invoke(cli, ["convert", str(DATA / "mini_swe_agent_2x.traj.json"), "--format", "swe-agent"])
    assert result.exit_code == 2 and "Traceback" not in result.output and "mini-swe-agent" in result.output


def test_mini_swe_agent_responses_items_in_the_message_list() -> None:
    doc = {"trajectory_format": "mini-swe-agent-1.1", "info": {"mini_version": "2.1.0"}, "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "task"},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "list files"}]},
        {"type": "function_call", "call_id": "fc1", "name": "bash", "arguments": "{\"command\": \"ls\"}"},
        {"type": "function_call_output", "call_id": "fc1", "output": "a.py", "extra": {"returncode": 0}},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Format error"}],
         "extra": {"interrupt_type": "FormatError"}},
        {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded", "submission": ""}},
    ]}
    t = read_transcript(json.dumps(doc))
    assert t.format == "mini-swe-agent" and t.metadata["exit_status"] == "LimitsExceeded"
    assert roles(t) == ["user", "assistant", "tool", "user"]
    assert t.messages[1]["_reasoning"] == "list files" and t.messages[3]["_injected"] == "harness-message"
    accounted(t)


# --- Gemini CLI -------------------------------------------------------------------------------


def test_gemini_stream_json_is_not_taken_for_openai_and_reads_whole() -> None:
    from hermes_core.transcripts import sniff_format

    assert sniff_format(DATA / "gemini_stream.jsonl") == "gemini-cli"
    t = read_transcript(DATA / "gemini_stream.jsonl")
    assert t.model == "gemini-2.5-pro" and t.metadata["session_id"] == "7f1c"
    assert roles(t) == ["user", "assistant", "tool", "tool", "assistant"]
    assert t.messages[1]["content"] == "Let me look at the log."  # delta chunks merged
    assert [c["id"] for c in t.messages[1]["tool_calls"]] == ["read_file-1", "shell-2"]
    assert t.messages[3] == {"role": "tool", "tool_call_id": "shell-2", "content": "make: *** [all] Error 2",
                             "_is_error": True}
    report = accounted(t)
    assert report["dropped"] == {"unknown:heartbeat": 1}  # an unknown event type: counted, not fatal
    assert t.metadata["notices"] == [{"severity": "warning", "message": "Loop detected, stopping"}]


def test_gemini_session_recording_lines_apply_updates_and_rewinds() -> None:
    t = read_transcript(DATA / "gemini_session.jsonl")
    assert [content_of(m) for m in t.messages if m["role"] == "user"] == [
        "Rename foo to bar in util.py", "rename it to baz"]  # the rewound request is gone
    assert t.messages[1]["content"] == "I'll search for foo."  # the later record of m2 won
    assert t.messages[1]["_reasoning"] == "Plan: Find foo first"
    assert t.messages[5]["_is_error"] is True and t.metadata["summary"] == "Rename foo"
    report = accounted(t)
    assert report["dropped"] == {"cli_notice:info": 1, "rewind": 1, "rewound_message": 2,
                                 "superseded_by_a_later_record": 1}


def test_gemini_legacy_recording_and_saved_chat() -> None:
    legacy = read_transcript(DATA / "gemini_session_legacy.json")
    assert roles(legacy) == ["user", "assistant", "tool", "assistant"] and legacy.model == "gemini-2.5-pro"
    accounted(legacy)
    chat = read_transcript(DATA / "gemini_checkpoint.json")
    assert chat.messages[0]["_injected"] == "environment-context"
    calls = chat.messages[3]["tool_calls"]
    # Calls without ids get ids, and the responses answer them in order by name.
    assert [c["id"] for c in calls] == ["gemini_call_1", "gemini_call_2"]
    assert [m.get("tool_call_id") for m in chat.messages[4:6]] == ["gemini_call_1", "gemini_call_2"]
    assert chat.messages[5]["_is_error"] is True and chat.messages[3]["_reasoning"] == "Reading the file first."
    report = accounted(chat)
    assert report["changed"]["tool_call_ids_generated"] == 2


def content_of(message: dict[str, Any]) -> str:
    from hermes_core.messages import content_text

    return content_text(message.get("content"))


# --- Qwen Code --------------------------------------------------------------------------------


def test_qwen_session_follows_the_active_branch_and_marks_notifications() -> None:
    t = read_transcript(DATA / "qwen_session.jsonl")
    assert t.model == "qwen3-coder-plus" and t.metadata["sessionId"] == "q-1"
    assert roles(t) == ["user", "assistant", "tool", "user", "assistant", "tool", "user", "assistant"]
    assert "I'll edit it the wrong way." not in [m.get("content") for m in t.messages]  # abandoned branch
    assert t.messages[1]["_reasoning"] == "Checking the parser."
    assert t.messages[5]["_is_error"] is True
    assert t.messages[6]["_injected"] == "harness-message" and "_injected" not in t.messages[3]
    report = accounted(t)
    assert report["dropped"] == {"off_the_active_branch": 1, "system:ui_telemetry": 1}
    assert report["absorbed"] == {"chat_compression": 1} and len(t.metadata["compactions"]) == 1


def test_qwen_stream_json_reads_as_sdk_messages() -> None:
    t = read_transcript(DATA / "qwen_stream.jsonl")
    assert roles(t) == ["assistant", "tool", "assistant"] and t.messages[1]["content"] == "hello"
    report = accounted(t)
    assert report["dropped"] == {"result": 1, "system:init": 1}


# --- Cline and Roo Code -----------------------------------------------------------------------

TASKS = TEST_DATA


def test_cline_results_in_user_text_are_attached_to_their_calls() -> None:
    t = read_transcript(TASKS / "cline_task" / "api_conversation_history.json")
    assert t.format == "cline"
    report = accounted(t)
    calls = [c for m in t.messages for c in m.get("tool_calls") or ()]
    assert [c["function"]["name"] for c in calls] == ["read_file", "replace_in_file", "write_to_file",
                                                     "attempt_completion"]
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": "src/app.ts"}
    results = [m for m in t.messages if m["role"] == "tool"]
    assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]  # none invented as missing
    assert report["changed"].get("missing_tool_results_filled") is None
    assert results[0]["content"] == "for (let i = 0; i <= n; i++) {}"
    # The XML of an attached call leaves the text; the call not executed stays there.
    assert "<read_file>" not in str(t.messages[2]["content"])
    assert "<execute_command>" in str(t.messages[5]["content"])


def test_cline_harness_text_is_marked_and_the_task_is_the_request() -> None:
    t = read_transcript(TASKS / "cline_task" / "api_conversation_history.json")
    users = [m for m in t.messages if m["role"] == "user"]
    requests = [m for m in users if "_injected" not in m]
    assert [m["content"] for m in requests] == ["<task>\nFix the off-by-one in src/app.ts\n</task>"]
    kinds = [m["_injected"] for m in users if "_injected" in m]
    assert kinds.count("environment-details") == 6 and kinds.count("harness-message") == 2
    unattached = next(m for m in users if m.get("_injected") == "observation")
    assert unattached["content"].startswith("[search_files for 'TODO'] Result:")  # no call to answer
    assert t.metadata["api_usage"]["requests"] == 2 and t.metadata["ui_messages"] == 6  # ui_messages.json
    assert t.model == "claude-sonnet-4-5"  # task_metadata.json: the last model used
    assert t.metadata["models_used"] == ["claude-sonnet-4-20250514", "claude-sonnet-4-5"]


def test_roo_code_native_and_xml_calls(tmp_path: Path) -> None:
    t = read_transcript(TASKS / "roo_task" / "api_conversation_history.json")
    assert t.format == "roo-code"
    accounted(t)
    assert roles(t) == ["user", "user", "assistant", "tool", "user", "assistant", "tool", "user", "assistant"]
    assert t.messages[3]["tool_call_id"] == "toolu_01"  # native tool_result block
    assert t.messages[6]["content"].endswith("3.2s")  # the header's own block held the result
    # Without the ui_messages.json beside it, the history alone reads the same.
    lone = tmp_path / "history.json"
    shutil.copy(TASKS / "cline_task" / "api_conversation_history.json", lone)
    alone = read_transcript(lone)
    assert alone.format == "cline" and "api_usage" not in alone.metadata and alone.model is None
    accounted(alone)


# --- goose ------------------------------------------------------------------------------------


def test_goose_session() -> None:
    t = read_transcript(DATA / "goose_session.jsonl")
    assert t.metadata["working_dir"] == "/home/u/proj"
    assert roles(t) == ["user", "assistant", "tool", "tool", "assistant", "tool", "user", "assistant"]
    assert t.messages[1]["_reasoning"] == "Run the test a few times."
    assert t.messages[2]["content"] == "1 failed, 3 passed"  # the user-only part never reached the model
    assert t.messages[3]["_is_error"] is True and t.messages[5]["_is_error"] is True  # status error / isError
    assert t.messages[6]["_injected"] == "harness-message"  # userVisible: false
    assert "(shown to the user only)" not in [m.get("content") for m in t.messages]  # agentVisible: false
    report = accounted(t)
    assert report["dropped"] == {"not_visible_to_the_model": 1}
    assert report["changed"]["ui_blocks_dropped:toolConfirmationRequest"] == 1
    assert report["changed"]["result_parts_for_the_user_only_dropped"] == 1


# --- OpenHands JSON Lines ---------------------------------------------------------------------


def test_openhands_evaluation_output_is_one_conversation_per_instance() -> None:
    runs = read_transcripts(DATA / "openhands_output.jsonl")
    assert [t.metadata["instance_id"] for t in runs] == ["django__django-1111", "sympy__sympy-2222"]
    first, second = runs
    assert first.model == "claude-sonnet-4-20250514" and first.system_prompt == "You are OpenHands agent."
    assert roles(first) == ["user", "assistant", "tool", "assistant", "tool"]
    assert first.messages[2]["_is_error"] is True  # exit code 1
    assert accounted(first)["dropped"] == {"observation:agent_state_changed": 1, "unknown_event": 1}
    # Early harness versions wrote [action, observation] pairs.
    assert roles(second) == ["user", "assistant"] and second.metadata["error"].startswith("Agent reached")
    accounted(second)
    one = read_transcript(DATA / "openhands_output.jsonl", index=1)
    assert one.metadata["instance_id"] == "sympy__sympy-2222"
    with pytest.raises(InvalidMessagesError, match="holds 2 conversations"):
        read_transcript(DATA / "openhands_output.jsonl")
    with pytest.raises(InvalidMessagesError, match="out of range"):
        read_transcript(DATA / "openhands_output.jsonl", index=7)


def test_openhands_event_lines_read_like_the_event_list() -> None:
    lines = read_transcript(DATA / "openhands_events.jsonl")
    whole = read_transcripts(DATA / "openhands_output.jsonl")[0]
    assert lines.messages == whole.messages and lines.system_prompt == whole.system_prompt
    accounted(lines)


# --- Codex CLI --------------------------------------------------------------------------------


def test_codex_compaction_of_every_kind_is_counted_never_an_empty_summary() -> None:
    t = read_transcript(DATA / "codex_compacted.jsonl")
    assert t.model == "gpt-5-codex" and t.system_prompt == "You are Codex, based on GPT-5."
    summaries = [m for m in t.messages if m.get("_summary")]
    assert [m["content"] for m in summaries] == ["Summary: the parser was split into lexer and grammar."]
    assert t.metadata["compactions"] == [{"replacement_items": 1, "summary": False}]
    assert t.messages[2]["_reasoning"] == "**Reading the parser**"  # reasoning summary kept
    report = accounted(t)
    assert report["absorbed"]["compacted_without_summary_text"] == 1
    assert report["changed"]["encrypted_compaction_dropped"] == 1
    assert report["dropped"]["unknown:future_record"] == 1  # a record type of a later version: counted


def test_codex_legacy_rollout_and_exec_json() -> None:
    legacy = read_transcript(DATA / "codex_legacy.jsonl")
    assert legacy.system_prompt == "Legacy instructions" and roles(legacy) == ["user", "assistant", "tool", "assistant"]
    assert accounted(legacy)["dropped"] == {"legacy_state": 2}
    run = read_transcript(DATA / "codex_exec.jsonl")
    assert run.metadata["thread_id"] == "th_1"
    assert [c["function"]["name"] for m in run.messages for c in m.get("tool_calls") or ()] == [
        "shell", "shell", "apply_patch", "docs.search"]
    assert run.messages[3]["_is_error"] is True  # exit code 2
    assert run.messages[0]["_reasoning"] == "**Scanning the repo**"
    assert accounted(run)["dropped"] == {"item.started": 1, "item:todo_list": 1, "turn.started": 1}


def test_formats_lists_every_new_reader_with_its_versions() -> None:
    result = CliRunner().invoke(cli, ["formats", "--json"])
    assert result.exit_code == 0
    rows = {r["name"]: r for r in json.loads(result.stdout)}
    for name in ("mini-swe-agent", "gemini-cli", "qwen-code", "cline", "roo-code", "goose", "openhands-jsonl",
                 "codex", "openhands"):
        assert rows[name]["versions"], name
        assert rows[name]["plugin"] == "transcripts"
    table = CliRunner().invoke(cli, ["formats"])
    assert "VERSIONS" in table.stdout.splitlines()[0] and "mini-swe-agent 1.x" in table.stdout


def test_gemini_restore_checkpoint_and_codex_typescript_session() -> None:
    checkpoint = {
        "history": [{"type": "user", "text": "fix it", "id": 1}],  # the UI's history
        "clientHistory": [{"role": "user", "parts": [{"text": "fix it"}]},
                          {"role": "model", "parts": [{"functionCall": {"name": "replace", "args": {"f": "a"}}}]}],
        "toolCall": {"name": "replace", "args": {"f": "a"}}, "commitHash": "abc", "filePath": "/w/a.py",
    }
    t = read_transcript(json.dumps(checkpoint))
    assert t.format == "gemini-cli" and roles(t) == ["user", "assistant"]
    accounted(t)
    session = {"session": {"timestamp": "2025-04-20T10:00:00Z", "id": "ts-1", "instructions": "Be careful."},
               "items": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                         {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hello"}]}]}
    old = read_transcript(json.dumps(session))
    assert old.format == "openai-responses" and old.system_prompt == "Be careful." and roles(old) == ["user", "assistant"]


def test_codex_exec_json_before_0_44() -> None:
    t = read_transcript(DATA / "codex_exec_legacy.jsonl")
    assert t.model == "o4-mini" and t.messages[0] == {"role": "user", "content": "Which files are here?"}
    assert [c["function"]["name"] for m in t.messages for c in m.get("tool_calls") or ()] == [
        "shell", "apply_patch", "docs.lookup"]
    assert t.messages[4]["_is_error"] is True and "_is_error" not in t.messages[2]  # success: false / exit 0
    assert t.messages[1]["_reasoning"] == "List the directory."
    report = accounted(t)
    assert report["dropped"] == {"event:exec_command_output_delta": 1, "event:task_started": 1}


def test_roo_code_role_less_reasoning_entries_are_counted() -> None:
    history = json.loads((TASKS / "roo_task" / "api_conversation_history.json").read_text())
    history.insert(3, {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA", "summary": [], "ts": 1})
    t = read_transcript(json.dumps(history))
    assert t.format == "roo-code"
    report = accounted(t)
    assert report["dropped"] == {"entry_without_role:reasoning": 1}
    assert report["changed"]["encrypted_reasoning_dropped"] == 1

"""The readers over real recorded sessions (read in place; skipped when the folder is absent).

Counts are those the README beside the files states, or that follow from the files' records.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.pairing import pairing_problems
from hermes_core.transcripts import read_transcript, read_transcripts


def test_claude_code_session(real_sessions_dir: Path) -> None:
    path = real_sessions_dir / "claude-code_8463c716.jsonl"
    t = read_transcript(path)
    report = t.conversion
    assert t.format == "claude-code" and report is not None
    assert len(t.messages) == 323  # the README: 323 messages after merging
    assert report.records == sum(1 for line in path.read_text().splitlines() if line.strip())
    assert report.unaccounted == 0
    assert pairing_problems(t.messages) == []
    assert report.tool_calls == sum(1 for m in t.messages if m["role"] == "tool")
    assert [m["_summary"] for m in t.messages if "_summary" in m] == ["claude-code"]
    assert len(t.metadata["compactions"]) == 1
    assert report.dropped["progress"] > 1000
    assert t.model == "claude-opus-4-6"


def _raw_calls(messages: list[dict]) -> int:
    return sum(len(m.get("tool_calls") or ()) for m in messages)


def test_hermes_agent_session(real_sessions_dir: Path) -> None:
    path = real_sessions_dir / "hermes-agent_session_20260429_083826_10b0d9d4.json"
    raw = json.loads(path.read_text())
    t = read_transcript(path)
    report = t.conversion
    assert t.format == "hermes-agent" and report is not None
    assert len(t.messages) == raw["message_count"] == report.records
    assert report.tool_calls == _raw_calls(raw["messages"])
    assert report.unaccounted == 0 and pairing_problems(t.messages) == []
    assert t.system_prompt == raw["system_prompt"] and len(t.tools) == len(raw["tools"])
    encrypted = sum(1 for m in raw["messages"] if m.get("codex_reasoning_items"))
    assert report.changed["codex_reasoning_items_dropped"] >= encrypted > 0
    assert not any("codex_reasoning_items" in m for m in t.messages)


@pytest.mark.parametrize("name, version", [
    ("swe-agent-0x_pydicom-1458.traj", "0.x"), ("swe-agent-1x_marshmallow-1867.traj", "1.x")])
def test_swe_agent_trajectories(real_sessions_dir: Path, name: str, version: str) -> None:
    raw = json.loads((real_sessions_dir / name).read_text())
    t = read_transcript(real_sessions_dir / name)
    report = t.conversion
    assert t.format == "swe-agent" and report is not None
    assert t.metadata["swe_agent_version"] == version
    assert len(t.chat_messages()) == len(raw["history"])
    assert report.records == len(raw["history"]) + len(raw["trajectory"]) and report.unaccounted == 0
    assert report.tool_calls == _raw_calls(raw["history"])
    assert pairing_problems(t.messages) == []
    if version == "0.x":  # the README: a 19 kB demonstration as message 2
        demo = t.chat_messages()[1]
        assert demo["_demonstration"] is True and len(demo["content"]) > 19_000
    else:
        ids = [c["id"] for m in t.messages for c in m.get("tool_calls") or ()]
        assert len(set(ids)) < len(ids)  # ids are reused, and still valid


def test_tau_bench_runs(real_sessions_dir: Path) -> None:
    path = real_sessions_dir / "tau-bench_gpt-4o-airline_runs1-10.json"
    raw = json.loads(path.read_text())
    runs = read_transcripts(path)
    assert len(runs) == len(raw) == 10
    for run, item in zip(runs, raw):
        assert run.format == "tau-bench" and run.conversion is not None
        assert len(run.chat_messages()) == len(item["traj"]) == run.conversion.records
        assert run.conversion.tool_calls == _raw_calls(item["traj"])
        assert run.conversion.unaccounted == 0 and pairing_problems(run.messages) == []
        assert run.metadata["task_id"] == item["task_id"]
    assert read_transcript(path, index=3).metadata["task_id"] == raw[3]["task_id"]

"""The readers over real recorded sessions (read in place; skipped when the folder is absent).

Counts are those the README beside the files states, or that follow from the files' records.
"""

from __future__ import annotations

from pathlib import Path

from hermes_core.pairing import pairing_problems
from hermes_core.transcripts import read_transcript


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

"""Gemini CLI ``--output-format json``: the one object it prints read as the reply it holds,
with what it does not hold said in a warning (never invented), every field accounted for."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import UnknownTranscriptFormatError
from hermes_core.transcripts import read_transcript

from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"


def test_the_json_output_is_the_final_reply_with_the_missing_turn_said(tmp_path: Path) -> None:
    anonymous = tmp_path / "out.dat"  # detected by content
    shutil.copy(DATA / "gemini_json_output.json", anonymous)
    t = read_transcript(anonymous)
    assert t.format == "gemini-cli"
    assert [m["role"] for m in t.messages] == ["assistant"]
    assert t.messages[0]["content"].startswith("The flaky test waited")
    assert t.model == "gemini-2.5-pro"
    assert t.metadata["session_id"].startswith("7d0c1f2a")
    assert t.metadata["stats"]["tools"]["totalCalls"] == 2
    report = t.conversion
    assert report is not None and report.unaccounted == 0 and report.records == 3
    assert dict(report.absorbed) == {"session_id": 1, "stats": 1}
    # The two tool calls happened but are not in the file: said, not invented as messages.
    assert report.tool_calls == 0 and pairing_problems(t.messages) == []
    assert any("2 tool call(s)" in w and "not in it" in w for w in report.warnings)


def test_an_error_output_is_read_empty_with_the_error_said() -> None:
    t = read_transcript(DATA / "gemini_json_error.json")
    assert t.format == "gemini-cli" and t.messages == ()
    assert t.metadata["error"]["code"] == 41
    report = t.conversion
    assert report is not None and report.unaccounted == 0
    assert any("ended in an error" in w and "Auth method" in w for w in report.warnings)


def test_several_models_are_listed_none_chosen(tmp_path: Path) -> None:
    doc = json.loads((DATA / "gemini_json_output.json").read_text(encoding="utf-8"))
    doc["stats"]["models"]["gemini-2.5-flash"] = doc["stats"]["models"]["gemini-2.5-pro"]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    t = read_transcript(path)
    assert t.model is None and t.metadata["models"] == ["gemini-2.5-pro", "gemini-2.5-flash"]


@pytest.mark.parametrize("doc", [
    {"response": "hi", "type": "result"},           # another tool's field: not Gemini's json output
    {"response": "hi", "stats": {"tokens": 3}},     # stats without per-model entries
    {"session_id": "x"},                            # neither a reply nor an error
])
def test_objects_that_only_look_alike_are_not_taken(doc: dict[str, object], tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    try:
        t = read_transcript(path)
    except UnknownTranscriptFormatError as exc:
        assert "gemini-cli" in exc.refusals
    else:
        assert t.format != "gemini-cli"

"""OpenHands session folders (``sessions/<id>/events/<n>.json``): a folder read as one
transcript by the core, ``convert``/``compress`` taking it, ``eval`` taking it as one transcript
(and a folder of transcripts still as its files), every record accounted for."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import InvalidMessagesError
from hermes_core.cli import cli
from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import Transcript, UnknownTranscriptFormatError
from hermes_core.transcripts import read_transcript, sniff_format

from hypothesis_budget import examples
from locations import DATA as TEST_DATA

DATA = TEST_DATA / "transcripts"
SESSION = DATA / "openhands_session"
SDK = DATA / "openhands_sdk_conversation"


def accounted(t: Transcript) -> dict[str, Any]:
    assert pairing_problems(t.messages) == []
    report = t.conversion
    assert report is not None and report.unaccounted == 0 and report.messages == len(t.messages)
    return report.to_dict()


def test_the_session_folder_is_one_transcript_read_in_event_number_order() -> None:
    t = read_transcript(SESSION)
    assert t.format == "openhands-events"
    assert t.system_prompt == "You are OpenHands agent."
    assert t.model == "anthropic/claude-sonnet-4"  # metadata.json's llm_model
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "tool", "user", "assistant", "tool",
                                              "assistant"]
    # 10.json comes after 9.json (by number, not by name): the closing message is last.
    assert t.messages[-1]["content"].startswith("The join now builds")
    two = t.messages[1]["tool_calls"]
    assert [c["id"] for c in two] == ["toolu_01", "toolu_02"]  # two actions of one model response
    assert t.messages[2]["_is_error"] is True  # exit code 1
    assert t.messages[4]["_injected"] == "recall"
    report = accounted(t)
    assert report["records"] == 13  # 12 event files + metadata.json
    assert report["absorbed"] == {"conversation_metadata": 1, "system_prompt": 1}
    assert report["dropped"] == {"observation:agent_state_changed": 1, "unknown_event": 1}
    assert t.metadata["conversation"]["title"] == "Fix the ORM bug"
    assert t.metadata["files_not_read"] == ["event_cache"]


def test_the_events_folder_alone_reads_the_same_conversation() -> None:
    whole = read_transcript(SESSION)
    events = read_transcript(SESSION / "events")
    assert events.format == "openhands-events"
    assert list(events.messages) == list(whole.messages)
    assert accounted(events)["records"] == 12


def test_a_missing_event_file_is_a_warning_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    shutil.copytree(SESSION / "events", folder)
    (folder / "5.json").unlink()
    (folder / "6.json").unlink()
    t = read_transcript(folder)
    accounted(t)
    assert any("2 event file(s) missing" in w and "5, 6" in w for w in t.conversion.warnings)  # type: ignore[union-attr]
    # The results of 5 and 6 are gone: their calls get placeholder results, counted.
    assert t.conversion.changed["missing_tool_results_filled"] == 2  # type: ignore[union-attr]


def test_an_event_file_that_is_not_json_names_the_file_and_the_reader(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    shutil.copytree(SESSION / "events", folder)
    (folder / "8.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidMessagesError) as err:
        read_transcript(folder)
    text = str(err.value)
    assert "8.json" in text and "not JSON" in text and "openhands-events" in text


def test_other_folders_are_refused_with_every_format_tried(tmp_path: Path) -> None:
    (tmp_path / "0.json").write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    with pytest.raises(UnknownTranscriptFormatError) as err:
        read_transcript(tmp_path)
    assert "openhands-events" in err.value.refusals and "openai" in err.value.refusals
    assert sniff_format(tmp_path) is None


def test_the_sdk_conversation_folder_reads_by_its_event_model() -> None:
    t = read_transcript(SDK)
    assert t.format == "openhands-events"
    assert t.model == "litellm_proxy/claude-sonnet-4-5"  # base_state.json's agent.llm.model
    assert t.system_prompt == "You are OpenHands agent.\nRepository: acme/orm"  # with the dynamic context
    assert t.tools == () and t.metadata["tools"] == ["terminal", "file_editor"]  # no schemas stored: names only
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "tool", "assistant", "tool", "assistant",
                                              "tool", "assistant"]
    first = t.messages[1]
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01", "toolu_02"]  # one llm_response_id
    assert first["_reasoning"] == "Start with the failing test."
    assert t.messages[5] == {"role": "tool", "tool_call_id": "toolu_03", "content": "Action rejected: Not that command",
                             "_is_error": True}
    assert t.messages[7]["_is_error"] is True and "not found" in t.messages[7]["content"]
    assert t.metadata["compactions"] == ["The user asked to fix the ORM join; the test fails on join."]
    report = accounted(t)
    assert report["records"] == 15  # 14 event files + base_state.json
    assert report["dropped"] == {"kind:ConversationStateUpdateEvent": 1, "kind:PauseEvent": 1}
    assert read_transcript(SDK / "events").messages == t.messages


def test_an_sdk_observation_flagged_as_an_error_is_an_error_result(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    shutil.copytree(SDK / "events", folder)
    path = folder / "event-00005-e5.json"
    event = json.loads(path.read_text(encoding="utf-8"))
    event["observation"]["is_error"] = True
    path.write_text(json.dumps(event), encoding="utf-8")
    result = read_transcript(folder).messages[2]
    assert result["_is_error"] is True and result["content"].startswith("Tool Execution Error. FAILED")


def test_a_file_input_still_reads_as_before() -> None:
    assert read_transcript(DATA / "openhands_events.jsonl").format == "openhands-jsonl"


def test_convert_and_compress_take_the_folder(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "out.json"
    result = runner.invoke(cli, ["convert", str(SESSION), "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["format"] == "openhands-events" and report["unaccounted"] == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    messages = written["messages"] if isinstance(written, dict) else written
    assert messages[0] == {"role": "system", "content": "You are OpenHands agent."}
    result = runner.invoke(cli, ["compress", str(SESSION), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["before"]["messages"] == 9


def test_convert_of_a_folder_no_format_reads_exits_2(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", str(tmp_path)])
    assert result.exit_code == 2
    assert "openhands-events: no numbered event files" in result.output
    assert "Traceback" not in result.output


def test_eval_takes_a_session_folder_as_one_transcript_and_a_folder_of_them_as_each(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["eval", str(SESSION), "--json", "--context-length", "100000"])
    assert result.exit_code in (0, 1), result.output
    assert [f["file"] for f in json.loads(result.stdout)["files"]] == [str(SESSION)]
    shutil.copytree(SESSION, tmp_path / "s1")
    shutil.copy(DATA / "openhands_events.jsonl", tmp_path / "one.jsonl")
    result = runner.invoke(cli, ["eval", str(tmp_path), "--json", "--context-length", "100000"])
    assert result.exit_code in (0, 1), result.output
    assert sorted(Path(f["file"]).name for f in json.loads(result.stdout)["files"]) == ["one.jsonl", "s1"]


@pytest.mark.parametrize("forced", ["openai", "claude-code", "aider"])
def test_a_file_format_forced_on_a_folder_says_so_in_one_line(forced: str) -> None:
    result = CliRunner().invoke(cli, ["convert", str(SESSION), "--format", forced])
    assert result.exit_code == 2
    assert "a folder, read only by a format of folders" in result.output
    assert "try --format openhands-events" in result.output and "Traceback" not in result.output


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=6),
                     st.sampled_from(["agent", "user", "environment", "run", "message", "recall", "error", "system",
                                      "ActionEvent", "ObservationEvent", "MessageEvent", "text", "image"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["action", "observation", "source", "args", "content", "tool_call_metadata", "tool_call_id",
         "model_response", "id", "extras", "exit_code", "kind", "llm_message", "tool_call", "thought",
         "is_error", "text", "type", "system_prompt", "llm_response_id"]), inner, max_size=3)), max_leaves=8)


@pytest.mark.parametrize("folder", [SESSION, SDK], ids=["0.x", "sdk"])
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.integers(0, 11), st.integers(0, 2), _values), min_size=1, max_size=10))
def test_random_event_files_never_refuse_the_folder(folder: Path, changes: list[tuple[int, int, Any]]) -> None:
    events = {p.name: json.loads(p.read_text(encoding="utf-8")) for p in (folder / "events").iterdir()}
    names = sorted(events, key=lambda n: int(n.split(".")[0]) if n[0].isdigit() else n)
    for which, how, value in changes:
        event = events[names[which]]
        if how == 0 or not isinstance(event, dict):
            events[names[which]] = value  # a whole event replaced by random JSON
        else:
            keys = sorted(event) or ["action"]
            event[keys[(which + how) % len(keys)]] = value  # one field of the wrong shape
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "events"
        target.mkdir()
        for name, event in events.items():
            (target / name).write_text(json.dumps(event), encoding="utf-8")
        t = read_transcript(target, "openhands-events")
        accounted(t)
        assert t.conversion is not None and t.conversion.records == len(events)


def test_a_long_folder_reports_progress_in_files_and_a_short_one_none(tmp_path: Path) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    for n in range(1100):
        (folder / f"{n}.json").write_text(json.dumps(
            {"id": n, "source": "user", "action": "message", "args": {"content": f"note {n}"}}), encoding="utf-8")
    calls: list[tuple[int, int]] = []
    t = read_transcript(folder, progress=lambda done, total: calls.append((done, total)))
    assert accounted(t)["records"] == 1100
    assert calls == [(512, 1100), (1024, 1100), (1100, 1100)]
    quiet: list[tuple[int, int]] = []
    read_transcript(SESSION, progress=lambda done, total: quiet.append((done, total)))
    assert quiet == []

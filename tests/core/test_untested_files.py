"""File and transcript paths the rest of the suite never reached: OS errors at each read, BOMs
at each entry, a file that grows while read, broken detectors and readers of third-party
formats, tool calls without ids, a format with no writer."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from hermes_core import HermesPluginError, InvalidMessagesError, PluginHost, hookimpl
from hermes_core import files as files_module
from hermes_core.diagnostics import collecting
from hermes_core.files import (
    FileRefused,
    dangling_target,
    kind_of,
    open_regular,
    read_bytes_bounded,
    read_fd_bounded,
    read_text_bounded,
)
from hermes_core.transcript_format import (
    Detection,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    check_depth,
    image_placeholder,
)
from hermes_core.transcripts import read_transcript, sniff_format, write_transcript

BOM = b"\xef\xbb\xbf"

# --- files ---------------------------------------------------------------------------------


def test_kind_of_names_every_file_type() -> None:
    assert kind_of(stat.S_IFBLK) == "a block device"
    assert kind_of(stat.S_IFREG) == "a regular file"
    assert kind_of(0) == "a special file"


def test_a_failing_fstat_closes_the_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f"
    path.write_text("x")
    opened: list[int] = []
    real_open = os.open

    def tracking_open(*args: Any, **kwargs: Any) -> int:
        opened.append(real_open(*args, **kwargs))
        return opened[-1]

    def failing_fstat(fd: int) -> Any:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "open", tracking_open)
    monkeypatch.setattr(os, "fstat", failing_fstat)
    with pytest.raises(OSError, match="Input/output error"):
        open_regular(path)
    monkeypatch.undo()
    with pytest.raises(OSError):
        os.fstat(opened[0])  # closed: no descriptor leaks


def test_an_absent_device_whose_kind_cannot_be_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def enxio(path: Any, flags: int, *args: Any) -> int:
        raise OSError(errno.ENXIO, "No such device or address")

    monkeypatch.setattr(os, "open", enxio)
    with pytest.raises(FileRefused) as caught:
        open_regular(tmp_path / "gone")  # stat fails too: the fallback names it
    assert caught.value.what_it_is == "a socket or an absent device"


def test_dangling_target_is_none_when_the_link_vanishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    assert dangling_target(link) == str(tmp_path / "nowhere")

    def vanished(path: Any) -> str:
        raise FileNotFoundError(errno.ENOENT, "gone", str(path))

    monkeypatch.setattr(os, "readlink", vanished)
    assert dangling_target(link) is None


def test_a_file_that_grew_after_fstat_is_read_up_to_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "growing"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_fd_bounded(fd, 3, 100) == (b"0123456789", False)  # fstat said 3 bytes
    finally:
        os.close(fd)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_fd_bounded(fd, 3, 6) == (b"012345", True)
    finally:
        os.close(fd)


def test_a_negative_bound_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        read_bytes_bounded(tmp_path / "f", -1)


def test_an_unreadable_file_is_one_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(path: Any, max_bytes: int) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(files_module, "read_bytes_bounded", denied)
    with collecting() as warnings:
        assert read_text_bounded(tmp_path / "SOUL.md", 100, "the identity", plugin="identity") is None
    [warning] = warnings
    assert warning.kind == "file_unreadable"
    assert warning.message == f"cannot read {tmp_path / 'SOUL.md'} (the identity): Permission denied; it was skipped"


def test_a_path_under_an_absent_root_has_no_file_in_the_way(monkeypatch: pytest.MonkeyPatch) -> None:
    # A drive that does not exist (Windows): no parent exists, so nothing is "in the way".
    monkeypatch.setattr(os.path, "lexists", lambda path: False)
    assert files_module._file_in_the_way("/no/such/drive/file") is None


# --- transcript sources ----------------------------------------------------------------------


MESSAGES = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]


def test_a_json_file_with_a_bom_is_detected_and_read(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_bytes(BOM + json.dumps(MESSAGES).encode())
    source = TranscriptSource.open(path)
    assert source.kind == "json" and not source.head_text.startswith("\ufeff")
    assert not source.read_text().startswith("\ufeff")
    assert read_transcript(path).messages == tuple(MESSAGES)


def test_a_jsonl_file_with_a_bom_and_blank_lines_streams_its_records(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [json.dumps(m) for m in MESSAGES]
    path.write_bytes(BOM + (lines[0] + "\n\n" + lines[1] + "\n").encode())
    source = TranscriptSource.open(path)
    assert source.kind == "jsonl"
    assert [record for _, record in source.records()] == MESSAGES
    assert source.document_or_none() is None  # not one JSON document


def test_os_errors_after_open_name_the_transcript(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in MESSAGES) + "\n")
    source = TranscriptSource.open(path)

    def failing(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(Path, "read_bytes", failing)
    monkeypatch.setattr(Path, "open", failing)
    with pytest.raises(InvalidMessagesError, match="chat.jsonl: cannot read transcript: .*Input/output error"):
        source.read_text()
    with pytest.raises(InvalidMessagesError, match="chat.jsonl: cannot read transcript"):
        list(source.records())
    with pytest.raises(InvalidMessagesError, match=r"x.json: cannot read: .*Input/output error"):
        source.load_json(tmp_path / "x.json")


def test_folder_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "events"
    folder.mkdir()
    (folder / "1.json").write_bytes(BOM + b'{"a": 1}')
    (folder / ".hidden").write_text("{}")
    source = TranscriptSource.open(folder)
    assert source.files() == [folder / "1.json"]
    assert source.load_json(folder / "1.json") == {"a": 1}
    assert TranscriptSource.open(json.dumps(MESSAGES)).files() == []  # not a folder

    def failing(self: Path) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(Path, "iterdir", failing)
    with pytest.raises(InvalidMessagesError, match="events: cannot list the folder"):
        source.files()


def test_check_depth_refuses_a_deep_value() -> None:
    value: Any = "leaf"
    for _ in range(6):
        value = [value]
    check_depth(value, "m", limit=6)
    with pytest.raises(InvalidMessagesError, match="m: nested too deeply \\(more than 5 levels\\)"):
        check_depth(value, "m", limit=5)


def test_an_image_by_url_keeps_its_url_in_the_placeholder() -> None:
    block = {"type": "image", "source": {"type": "url", "media_type": "image/png", "url": "https://x.test/a.png"}}
    assert image_placeholder(block) == {"type": "text", "text": "[image omitted: image/png, https://x.test/a.png]"}


# --- transcripts ------------------------------------------------------------------------------


def _format_plugin(detect: Any, read: Any) -> object:
    class Plugin:
        @hookimpl
        def hermes_transcript_formats(self) -> Any:
            return TranscriptFormat(name="odd", description="a test format", detect=detect, read=read)

    return Plugin()


def _accept(source: TranscriptSource) -> Detection:
    return Detection.accept(1.0, "always")


def test_a_broken_detector_costs_only_its_format() -> None:
    def broken(source: TranscriptSource) -> Detection:
        raise RuntimeError("detector bug")

    host = PluginHost.create(plugins=[(_format_plugin(broken, lambda s: None), "odd_plugin")])
    with collecting() as warnings:
        assert sniff_format(json.dumps(MESSAGES), host=host) == "openai"
    [warning] = [w for w in warnings if w.kind == "transcript_detector_failed"]
    assert "format 'odd' (plugin odd_plugin) failed to inspect <text>: RuntimeError: detector bug" in warning.message


def test_a_detector_answering_no_detection_is_a_refusal() -> None:
    host = PluginHost.create(plugins=[(_format_plugin(lambda s: 0.99, lambda s: None), "odd_plugin")])
    assert sniff_format(json.dumps(MESSAGES), host=host) == "openai"


def test_sniffing_empty_input_answers_none() -> None:
    assert sniff_format(b"  \n ") is None


def test_a_detector_finding_the_input_invalid_stops_detection() -> None:
    def strict(source: TranscriptSource) -> Detection:
        raise InvalidMessagesError(f"{source.name}: line 3 is cut")

    host = PluginHost.create(plugins=[(_format_plugin(strict, lambda s: None), "odd_plugin")])
    with pytest.raises(InvalidMessagesError, match="<input>: line 3 is cut"):
        read_transcript(json.dumps(MESSAGES).encode(), host=host)


def test_a_reader_recursing_too_deep_is_an_invalid_transcript() -> None:
    def recursing(source: TranscriptSource) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    host = PluginHost.create(plugins=[(_format_plugin(_accept, recursing), "odd_plugin")])
    with pytest.raises(InvalidMessagesError, match="<input>: nested too deeply to read as odd"):
        read_transcript(b"some text", format="odd", host=host)


def test_a_plugin_error_from_a_reader_passes_through() -> None:
    def refusing(source: TranscriptSource) -> Any:
        raise HermesPluginError("the odd reader needs its companion plugin")

    host = PluginHost.create(plugins=[(_format_plugin(_accept, refusing), "odd_plugin")])
    with pytest.raises(HermesPluginError, match="needs its companion plugin"):
        read_transcript(b"some text", format="odd", host=host)


def test_tool_calls_without_ids_are_named_and_their_results_paired() -> None:
    messages = [
        {"role": "user", "content": "list"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "call_b", "type": "function", "function": {"name": "pwd", "arguments": "{}"}},
            {"type": "function", "function": {"name": "df", "arguments": "{}"}},
        ]},
        {"role": "tool", "content": "a b"},
        {"role": "tool", "tool_call_id": "call_b", "content": "/"},
        {"role": "tool", "content": "90%"},
    ]
    transcript = read_transcript(json.dumps(messages))
    calls = transcript.messages[1]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_missing_1_0", "call_b", "call_missing_1_2"]
    assert [m.get("tool_call_id") for m in transcript.messages[2:]] == ["call_missing_1_0", "call_b", "call_missing_1_2"]
    assert transcript.conversion.changed == {"tool_call_ids_generated": 2}


def test_writing_a_format_without_a_writer_lists_those_with_one() -> None:
    transcript = Transcript(messages=MESSAGES)
    with pytest.raises(InvalidMessagesError, match=r"cannot write transcript format 'nope'; formats with a writer: .*openai"):
        write_transcript(transcript, "nope")

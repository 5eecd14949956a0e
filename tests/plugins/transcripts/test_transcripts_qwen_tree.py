"""Qwen Code's record tree beyond the fixture: a record written twice, a parent beyond the
bookkeeping window, a bookkeeping record between a message and its reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core.transcripts import read_transcript
from hermes_plugins.transcripts import qwen_code


def _record(uuid: str, parent: str | None, kind: str, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "parentUuid": parent, "sessionId": "q-9", "cwd": "/w", "type": kind, **extra}


def _said(uuid: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    kind = "assistant" if role == "model" else "user"
    return _record(uuid, parent, kind, message={"role": role, "parts": [{"text": text}]})


def _read(tmp_path: Path, records: list[dict[str, Any]]) -> Any:
    path = tmp_path / "chat.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return read_transcript(path, "qwen-code")


def test_a_record_written_again_stands_once_at_its_later_place(tmp_path: Path) -> None:
    t = _read(tmp_path, [
        _said("u1", None, "user", "first"),
        _said("a1", "u1", "model", "old answer"),
        _said("u2", "a1", "user", "second"),
        _said("a1", "u1", "model", "resumed answer"),  # a resumed session writes a1 again
        _said("u3", "a1", "user", "third"),
    ])
    assert [m["content"] for m in t.messages] == ["first", "resumed answer", "third"]
    report = t.conversion.to_dict()
    assert report["dropped"] == {"duplicate_uuid": 1, "off_the_active_branch": 1}  # u2 hung off the old a1
    assert report["unaccounted"] == 0


def test_bookkeeping_between_messages_keeps_the_chain(tmp_path: Path) -> None:
    t = _read(tmp_path, [
        _said("u1", None, "user", "hi"),
        _record("s1", "u1", "system", subtype="ui_telemetry"),
        _record("s2", "s1", "system", subtype="chat_compression", systemPayload={"tokens": 5, "nested": {}}),
        _said("a1", "s2", "model", "hello"),
    ])
    assert [m["content"] for m in t.messages] == ["hi", "hello"]
    assert t.metadata["compactions"] == [{"timestamp": None, "tokens": 5}]  # scalars only


def test_a_parent_beyond_the_window_is_read_as_the_conversation_going_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(qwen_code, "ALIAS_WINDOW", 2)
    telemetry = [_record(f"s{i}", "u1" if i == 0 else f"s{i - 1}", "system", subtype="ui") for i in range(4)]
    t = _read(tmp_path, [_said("u1", None, "user", "hi"), *telemetry, _said("a1", "s0", "model", "hello")])
    assert [m["content"] for m in t.messages] == ["hi", "hello"]
    assert t.conversion.to_dict()["changed"] == {"parent_outside_window_read_as_linear": 1}

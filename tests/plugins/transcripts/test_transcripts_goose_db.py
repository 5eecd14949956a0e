"""goose's SQLite session store (``sessions.db``): one conversation per session, goose's order,
its visibility metadata, every row accounted for. The database is built here by hand, with the
tables as goose's session storage creates them (schema version 9 and an early one without
``metadata_json``)."""

from __future__ import annotations

import json
import sqlite3
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
from hermes_core.transcript_format import Transcript
from hermes_core.transcripts import read_transcript, read_transcripts, sniff_format

from hypothesis_budget import examples

SESSIONS = """CREATE TABLE sessions (
    id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
    user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    extension_data TEXT DEFAULT '{}', total_tokens INTEGER, input_tokens INTEGER, output_tokens INTEGER,
    accumulated_total_tokens INTEGER, accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
    schedule_id TEXT, recipe_json TEXT, user_recipe_values_json TEXT, provider_name TEXT, model_config_json TEXT,
    tenant_id TEXT, user_id TEXT)"""
MESSAGES = """CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
    timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER{metadata})"""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def request(ident: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "toolRequest", "id": ident,
            "toolCall": {"status": "success", "value": {"name": name, "arguments": arguments}}}


def response(ident: str, output: str, *, error: bool = False) -> dict[str, Any]:
    return {"type": "toolResponse", "id": ident,
            "toolResult": {"status": "success", "value": {"content": [text(output)], "isError": error}}}


# (session, role, content, metadata, timestamp): out of insertion order on purpose (goose orders by timestamp).
ROWS: list[tuple[str, str, Any, Any, str]] = [
    ("s1", "user", [text("The upload test is flaky, fix it")], {"userVisible": True, "agentVisible": True},
     "2026-01-05 10:00:00"),
    ("s1", "user", [response("call_a", "1 failed, 3 passed", error=True)], {"userVisible": True, "agentVisible": True},
     "2026-01-05 10:00:09"),
    ("s1", "assistant", [{"type": "thinking", "thinking": "Run it first.", "signature": "s"}, text("Running it."),
                         request("call_a", "developer__shell", {"command": "pytest -k upload"})],
     {"userVisible": True, "agentVisible": True}, "2026-01-05 10:00:05"),
    ("s1", "user", [text("goose: the context was compacted")], {"userVisible": True, "agentVisible": False},
     "2026-01-05 10:00:10"),
    ("s1", "user", [text("Continue from the summary.")], {"userVisible": False, "agentVisible": True},
     "2026-01-05 10:00:11"),
    ("s1", "system", [text("an internal note")], None, "2026-01-05 10:00:12"),
    ("s1", "assistant", "{broken", None, "2026-01-05 10:00:13"),
    ("s1", "assistant", [text("The upload test waits for the server now.")], {"userVisible": True, "agentVisible": True},
     "2026-01-05 10:00:20"),
    ("s2", "user", [text("What does this repo do?")], None, "2026-01-06 09:00:00"),
    ("s2", "assistant", [text("It is an ORM.")], None, "2026-01-06 09:00:03"),
]


def make_db(path: Path, *, with_metadata: bool = True) -> None:
    db = sqlite3.connect(path)
    db.execute(SESSIONS)
    db.execute(MESSAGES.format(metadata=", metadata_json TEXT" if with_metadata else ""))
    db.execute("INSERT INTO sessions (id, name, working_dir, created_at, provider_name, model_config_json, total_tokens)"
               " VALUES ('s1', 'Fix flaky test', '/home/u/proj', '2026-01-05 10:00:00', 'anthropic', ?, 5120)",
               (json.dumps({"model_name": "claude-sonnet-4", "context_limit": 200000}),))
    db.execute("INSERT INTO sessions (id, description, working_dir, created_at) "
               "VALUES ('s2', 'Explain repo', '/home/u/orm', '2026-01-06 09:00:00')")
    for session, role, content, metadata, stamp in ROWS:
        body = content if isinstance(content, str) else json.dumps(content)
        if with_metadata:
            db.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp, metadata_json)"
                       " VALUES (?, ?, ?, 0, ?, ?)", (session, role, body, stamp,
                                                      None if metadata is None else json.dumps(metadata)))
        else:
            db.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp)"
                       " VALUES (?, ?, ?, 0, ?)", (session, role, body, stamp))
    db.commit()
    db.close()


def accounted(t: Transcript) -> dict[str, Any]:
    assert pairing_problems(t.messages) == []
    report = t.conversion
    assert report is not None and report.unaccounted == 0 and report.messages == len(t.messages)
    return report.to_dict()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    make_db(path)
    return path


def test_detected_by_its_tables_and_one_conversation_per_session(db_path: Path) -> None:
    assert sniff_format(db_path) == "goose-db"
    runs = read_transcripts(db_path)
    assert [t.metadata["id"] for t in runs] == ["s1", "s2"]
    for t in runs:
        assert t.format == "goose-db"
        accounted(t)
    assert runs[1].metadata["description"] == "Explain repo"
    with pytest.raises(InvalidMessagesError, match="holds 2 conversations"):
        read_transcript(db_path)


def test_a_session_reads_in_goose_order_with_its_visibility(db_path: Path) -> None:
    t = read_transcript(db_path, index=0)
    assert t.model == "claude-sonnet-4"
    assert t.metadata["name"] == "Fix flaky test" and t.metadata["working_dir"] == "/home/u/proj"
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "user", "assistant"]
    call = t.messages[1]
    assert call["tool_calls"][0]["id"] == "call_a" and call["_reasoning"] == "Run it first."
    assert t.messages[2]["_is_error"] is True and t.messages[2]["content"] == "1 failed, 3 passed"
    assert t.messages[3] == {"role": "user", "content": "Continue from the summary.", "_injected": "harness-message"}
    report = accounted(t)
    assert report["records"] == 9  # the session row + 8 message rows
    assert report["absorbed"] == {"session_row": 1}
    assert report["dropped"] == {"content_not_a_json_list": 1, "not_visible_to_the_model": 1,
                                 "unknown_role:system": 1}
    assert any("content_json is not a JSON list" in w for w in report["warnings"])


def test_session_by_id_and_an_index_out_of_range(db_path: Path) -> None:
    assert read_transcript(db_path, options={"session": "s2"}).messages[-1]["content"] == "It is an ORM."
    with pytest.raises(InvalidMessagesError, match="out of range"):
        read_transcript(db_path, index=5)
    with pytest.raises(InvalidMessagesError, match="no session 'nope'"):
        read_transcript(db_path, options={"session": "nope"})


def test_an_early_schema_without_metadata_json_reads(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    make_db(path, with_metadata=False)
    t = read_transcript(path, index=0)
    accounted(t)
    # Without visibility metadata every user/assistant row reaches the model.
    assert any(m.get("content") == "goose: the context was compacted" for m in t.messages)


def test_not_taken_for_hermes_agents_state_db(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, model TEXT)")
    db.execute("CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, "
               "tool_calls TEXT, tool_call_id TEXT)")
    db.commit()
    db.close()
    assert sniff_format(path) == "hermes-agent-db"


def test_convert_with_index_on_the_command_line(db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    result = CliRunner().invoke(cli, ["convert", str(db_path), "--index", "1", "-o", str(out), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["unaccounted"] == 0
    written = json.loads(out.read_text(encoding="utf-8"))
    messages = written["messages"] if isinstance(written, dict) else written
    assert [m["content"] for m in messages] == ["What does this repo do?", "It is an ORM."]


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=6),
                     st.sampled_from(["text", "toolRequest", "toolResponse", "thinking", "image", "user", "error"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["type", "text", "id", "toolCall", "toolResult", "status", "value", "content", "isError",
         "agentVisible", "userVisible"]), inner, max_size=3)), max_leaves=8)


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "system", ""]), _values, _values), max_size=8))
def test_random_rows_never_refuse_the_database(rows: list[tuple[str, Any, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "sessions.db"
        make_db(path)
        db = sqlite3.connect(path)
        for role, content, metadata in rows:
            db.execute("INSERT INTO messages (session_id, role, content_json, created_timestamp, timestamp, "
                       "metadata_json) VALUES ('s1', ?, ?, 0, '2026-01-05 10:00:30', ?)",
                       (role, json.dumps(content), json.dumps(metadata)))
        db.commit()
        db.close()
        t = read_transcript(path, index=0)
        accounted(t)
        assert t.conversion is not None and t.conversion.records == 9 + len(rows)

"""goose's SQLite session store (``~/.local/share/goose/sessions/sessions.db``, where goose keeps
its sessions since it left one JSON Lines file a session).

Two tables matter: ``sessions`` (``id``, ``name``/``description``, ``working_dir``,
``session_type``, ``provider_name``, ``model_config_json``, token counts ...) and ``messages``
(``session_id``, ``role``, ``content_json`` - the same typed content list a JSONL session line
holds -, ``created_timestamp``, ``timestamp``, and from schema version 3 ``metadata_json`` with
``userVisible``/``agentVisible``). Messages are read in goose's own order (``timestamp``, then
the row id for rows of the same second) and converted as the ``goose`` reader converts a line.

One conversation per session (``--index N`` in the order of creation, or
``options={"session": id}``); each message row is a record, the session row is absorbed into the
metadata (name, working dir, session type, provider, token counts), ``model_config_json``'s
``model_name`` is the model. A role goose does not load (it skips everything but user and
assistant) is dropped, counted; a row whose ``content_json`` is not a JSON list is dropped,
counted and named in a warning (goose itself cannot load that session).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    InvalidMessagesError,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
)
from hermes_plugins.transcripts.common import reads, run_transcript
from hermes_plugins.transcripts.goose import convert_message
from hermes_plugins.transcripts.sqlite_db import columns, read_database, schema_of

NAME = "goose-db"
_SESSION_FIELDS = (
    "id", "name", "description", "working_dir", "session_type", "created_at", "updated_at", "provider_name",
    "schedule_id", "total_tokens", "input_tokens", "output_tokens", "accumulated_total_tokens",
    "accumulated_input_tokens", "accumulated_output_tokens",
)


@reads("sqlite")
def detect(source: TranscriptSource) -> Detection:
    found = schema_of(source, "sessions", "messages")
    if isinstance(found, str):
        return Detection.refuse(found)
    sessions, messages = found["sessions"], found["messages"]
    if {"id", "working_dir"} <= sessions and {"session_id", "role", "content_json"} <= messages:
        return Detection.accept(0.95, "sessions and messages (content_json) tables of goose's sessions.db")
    return Detection.refuse("no sessions/messages tables with goose's columns (working_dir, content_json)")


def read(source: TranscriptSource) -> list[Transcript]:
    return read_database(source, _read, reader=NAME)


def _model(session: sqlite3.Row) -> str | None:
    if "model_config_json" not in session.keys() or not session["model_config_json"]:
        return None
    try:
        config = json.loads(session["model_config_json"])
    except json.JSONDecodeError:
        return None
    name = config.get("model_name") if isinstance(config, Mapping) else None
    return name if isinstance(name, str) else None


def _read(db: sqlite3.Connection, source: TranscriptSource) -> list[Transcript]:
    session_cols = columns(db, "sessions")
    message_cols = columns(db, "messages")
    order = "created_at, rowid" if "created_at" in session_cols else "rowid"
    sessions = list(db.execute(f"SELECT * FROM sessions ORDER BY {order}"))
    wanted = source.options.get("session")
    index = source.options.get("index")
    if wanted is not None:
        chosen = [s for s in sessions if s["id"] == wanted]
        if not chosen:
            raise InvalidMessagesError(f"{source.name}: no session {wanted!r}")
    elif index is not None:
        if not 0 <= int(index) < len(sessions):
            raise InvalidMessagesError(
                f"{source.name}: index {index} out of range (0..{len(sessions) - 1}, {len(sessions)} sessions)")
        chosen = [sessions[int(index)]]
    else:
        chosen = sessions
    message_order = "timestamp, id" if "timestamp" in message_cols else "id"
    out = []
    for session in chosen:
        report = source.report if len(chosen) == 1 else ReportBuilder(format=NAME, source=source.name)
        report.saw()
        report.absorbed("session_row")
        messages: list[dict[str, Any]] = []
        rows = db.execute(f"SELECT * FROM messages WHERE session_id = ? ORDER BY {message_order}", (session["id"],))
        for row in rows:
            report.saw()
            _add(row, message_cols, messages, report)
        keys = session.keys()
        metadata = {k: session[k] for k in _SESSION_FIELDS if k in keys and session[k] is not None}
        out.append(run_transcript(source, report, messages, model=_model(session), metadata=metadata))
    return out


def _add(row: sqlite3.Row, columns: set[str], messages: list[dict[str, Any]], report: ReportBuilder) -> None:
    role = row["role"]
    if role not in ("user", "assistant"):
        report.dropped(f"unknown_role:{role}")  # goose's loader skips these rows too
        return
    try:
        content = json.loads(row["content_json"])
    except (json.JSONDecodeError, TypeError):
        content = None
    if not isinstance(content, list):
        report.dropped("content_not_a_json_list")
        report.warn(f"message row {row['id']}: content_json is not a JSON list; the row is left out")
        return
    metadata: Any = None
    if "metadata_json" in columns and row["metadata_json"]:
        try:
            metadata = json.loads(row["metadata_json"])
        except json.JSONDecodeError:
            report.changed("metadata_json_not_json_ignored")
    if isinstance(metadata, Mapping) and metadata.get("agentVisible") is False:
        report.dropped("not_visible_to_the_model")
        return
    record = {"role": role, "content": [c for c in content if isinstance(c, Mapping)],
              "metadata": metadata if isinstance(metadata, Mapping) else {}}
    converted = convert_message(record, report)
    if not converted:
        report.dropped(f"empty_{role}_message")
        return
    messages.extend(converted)
    report.converted()


FORMAT = TranscriptFormat(
    name=NAME,
    description="goose SQLite session store (~/.local/share/goose/sessions/sessions.db), one conversation per session",
    versions="goose sessions.db, schema versions 1-9",
    detect=detect,
    read=read,
)

"""Hermes Agent sessions: the session files (``~/.hermes/sessions/session_*.json``) and the
SQLite store (``~/.hermes/state.db``, one conversation per session row).

Messages are OpenAI chat already; the replay fields are what needs care: ``reasoning`` /
``reasoning_content`` become ``_reasoning`` (once when they repeat each other), encrypted
``codex_reasoning_items`` / ``reasoning_details`` are dropped with a count, and a user message
that opens with Hermes Agent's compaction banner is marked ``_summary: "hermes-agent"``.
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
from hermes_plugins.transcripts.common import document_list, mark_user_text, reads, run_transcript, with_list
from hermes_plugins.transcripts.openai_chat import convert_message
from hermes_plugins.transcripts.sqlite_db import columns, read_database, schema_of

NAME = "hermes-agent"
DB_NAME = "hermes-agent-db"
_SESSION_KEYS = ("session_id", "platform", "session_start", "last_updated", "base_url", "message_count")
_ENCRYPTED = ("codex_reasoning_items", "reasoning_details", "codex_message_items")


def convert(message: dict[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """One Hermes Agent message as ours (in place)."""
    reasoning = [message.pop(k) for k in ("reasoning", "reasoning_content") if k in message]
    texts = [r for r in reasoning if isinstance(r, str) and r]
    if texts:
        message["_reasoning"] = texts[0] if all(t == texts[0] for t in texts) else "\n\n".join(dict.fromkeys(texts))
        report.changed("reasoning_kept_as_metadata")
    for key in _ENCRYPTED:
        value = message.pop(key, None)
        if value:
            report.changed(f"{key}_dropped", len(value) if isinstance(value, list) else 1)
    if message.get("role") == "user":
        mark_user_text(message, report)
    return convert_message(message, report)


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    doc = with_list(source.document_or_none(), "messages")
    if doc is None:
        return Detection.refuse("not an object with 'messages'")
    marks = [k for k in _SESSION_KEYS if k in doc]
    if "session_id" in doc and len(marks) >= 2:
        return Detection.accept(0.95, f"a session file ({', '.join(marks)})")
    return Detection.refuse("no Hermes Agent session keys (session_id, platform, session_start ...)")


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    doc, raw = document_list(source, "messages", "expected an object with 'messages'")
    system_prompt = doc.get("system_prompt") if isinstance(doc.get("system_prompt"), str) else None
    messages = []
    for number, message in enumerate(raw):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InvalidMessagesError(f"{source.name}: message {number}: not a chat message with a role", index=number)
        if number == 0 and message["role"] == "system" and isinstance(message.get("content"), str):
            system_prompt = system_prompt or message["content"]
            report.absorbed("system_prompt")
            continue
        messages.append(convert(message, report))
        report.converted()
    metadata = {k: doc[k] for k in _SESSION_KEYS if k in doc}
    tools = [dict(t) for t in doc.get("tools") or () if isinstance(t, Mapping)]
    return source.transcript(messages, system_prompt=system_prompt, tools=tools,
                             model=doc.get("model") if isinstance(doc.get("model"), str) else None,
                             metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="Hermes Agent session file (~/.hermes/sessions/session_*.json)",
    detect=detect,
    read=read,
)


# --- state.db ---------------------------------------------------------------------------------


@reads("sqlite")
def detect_db(source: TranscriptSource) -> Detection:
    found = schema_of(source, "sessions", "messages")
    if isinstance(found, str):
        return Detection.refuse(found)
    sessions, messages = found["sessions"], found["messages"]
    if {"id"} <= sessions and {"session_id", "role", "content", "tool_calls"} <= messages:
        return Detection.accept(0.95, "sessions and messages tables of Hermes Agent's state.db")
    return Detection.refuse("no sessions/messages tables with Hermes Agent's columns")


def read_db(source: TranscriptSource) -> list[Transcript]:
    return read_database(source, _read_db, reader="hermes-agent-db")


def _read_db(db: sqlite3.Connection, source: TranscriptSource) -> list[Transcript]:
    session_cols = columns(db, "sessions")
    message_cols = columns(db, "messages")
    order = "started_at, id" if "started_at" in session_cols else "rowid"
    chosen = _chosen(list(db.execute(f"SELECT * FROM sessions ORDER BY {order}")), source)
    prompts = _system_prompts(db) if "system_prompt_hash" in session_cols else {}
    out = []
    for session in chosen:
        report = source.report if len(chosen) == 1 else ReportBuilder(format=DB_NAME, source=source.name)
        keys = session.keys()
        prompt = session["system_prompt"] if "system_prompt" in keys else None
        if not prompt and "system_prompt_hash" in keys:
            prompt = prompts.get(session["system_prompt_hash"])
        messages: list[dict[str, Any]] = []
        order = "timestamp, id" if "timestamp" in message_cols else "id"
        for row in db.execute(f"SELECT * FROM messages WHERE session_id = ? ORDER BY {order}", (session["id"],)):
            report.saw()
            if "active" in message_cols and row["active"] == 0:
                report.dropped("inactive_rows")
                continue
            message = _row_message(row, message_cols, source)
            if not messages and message["role"] == "system" and isinstance(message["content"], str):
                prompt = prompt or message["content"]
                report.absorbed("system_prompt")
                continue
            messages.append(convert(message, report))
            report.converted()
        metadata = {k: session[k] for k in ("id", "source", "title", "started_at", "parent_session_id")
                    if k in keys and session[k] is not None}
        out.append(run_transcript(source, report, messages, system_prompt=prompt,
                                  model=session["model"] if "model" in keys else None, metadata=metadata))
    return out


def _chosen(sessions: list[sqlite3.Row], source: TranscriptSource) -> list[sqlite3.Row]:
    """The sessions asked for: ``options["session"]`` (an id), ``options["index"]``, else all."""
    wanted = source.options.get("session")
    index = source.options.get("index")
    if wanted is not None:
        chosen = [s for s in sessions if s["id"] == wanted]
        if not chosen:
            raise InvalidMessagesError(f"{source.name}: no session {wanted!r}")
        return chosen
    if index is not None:
        if not 0 <= int(index) < len(sessions):
            raise InvalidMessagesError(f"{source.name}: index {index} out of range ({len(sessions)} sessions)")
        return [sessions[int(index)]]
    return sessions


def _system_prompts(db: sqlite3.Connection) -> dict[Any, Any]:
    """System prompts by hash (newer stores keep each prompt once); none when the table is unreadable."""
    try:
        return {row[0]: row[1] for row in db.execute("SELECT hash, content FROM system_prompts")}
    except sqlite3.Error:
        return {}


def _row_message(row: sqlite3.Row, message_cols: set[str], source: TranscriptSource) -> dict[str, Any]:
    """One ``messages`` row as a chat message, with the reasoning columns the row fills."""
    message: dict[str, Any] = {"role": row["role"], "content": row["content"]}
    if row["tool_calls"]:
        try:
            message["tool_calls"] = json.loads(row["tool_calls"])
        except json.JSONDecodeError:
            raise InvalidMessagesError(f"{source.name}: message row {row['id']}: tool_calls is not JSON") from None
    if row["tool_call_id"]:
        message["tool_call_id"] = row["tool_call_id"]
    for key in ("reasoning", "reasoning_content", *_ENCRYPTED):
        if key in message_cols and row[key]:
            value = row[key]
            if key in _ENCRYPTED:
                try:
                    value = json.loads(value)
                except json.JSONDecodeError:
                    pass
            message[key] = value
    return message


DB_FORMAT = TranscriptFormat(
    name=DB_NAME,
    description="Hermes Agent SQLite store (~/.hermes/state.db), one conversation per session",
    detect=detect_db,
    read=read_db,
)

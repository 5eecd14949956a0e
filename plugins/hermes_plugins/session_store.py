"""The embedded session store: each session's built system prompt in SQLite under HERMES_HOME.

Gateways often build a new agent object per turn, sometimes in another process; replaying the
stored bytes keeps the provider's prefix cache warm where a rebuild could differ (a new day,
memory written since). WAL mode lets several processes read while one writes; every call opens
its own short-lived connection, so the store is safe to share across threads and processes.
A deployment with many workers on many machines replaces this by answering
``hermes_session_store`` with a shared store.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from hermes_core import hookimpl

DB_NAME = "sessions.db"
BUSY_TIMEOUT_MS = 5_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_prompts (
    session_id    TEXT PRIMARY KEY,
    system_prompt TEXT NOT NULL,
    model         TEXT NOT NULL DEFAULT '',
    provider      TEXT NOT NULL DEFAULT '',
    updated_at    REAL NOT NULL
)
"""


class SQLiteSessionStore:
    """``get_prompt`` / ``put_prompt`` over one SQLite file (created on first write)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # WAL: readers never block the writer; NORMAL sync is durable across process crashes
        # (only an OS crash can lose the last commits, and a lost prompt is simply rebuilt).
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute(_SCHEMA)
        return conn

    def get_prompt(self, session_id: str) -> str | None:
        """The stored prompt of ``session_id``, or ``None`` when there is none."""
        if not self.path.exists():
            return None
        conn = self._connect()
        try:
            row = conn.execute(
                "SELECT system_prompt FROM session_prompts WHERE session_id = ?", (session_id,)
            ).fetchone()
        finally:
            conn.close()
        return None if row is None else row[0]

    def put_prompt(self, session_id: str, prompt: str, *, model: str = "", provider: str = "") -> None:
        """Store (or replace) the prompt of ``session_id``."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = self._connect()
        try:
            conn.execute(
                "INSERT INTO session_prompts (session_id, system_prompt, model, provider, updated_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET "
                "system_prompt = excluded.system_prompt, model = excluded.model, "
                "provider = excluded.provider, updated_at = excluded.updated_at",
                (session_id, prompt, model or "", provider or "", time.time()),
            )
        finally:
            conn.close()

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({str(self.path)!r})"


@hookimpl(trylast=True)
def hermes_session_store(home: Path, config: Any) -> SQLiteSessionStore:
    return SQLiteSessionStore(Path(home) / DB_NAME)

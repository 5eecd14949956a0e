"""The embedded session store: each session's built system prompt in SQLite under HERMES_HOME.

Gateways often build a new agent object per turn, sometimes in another process; replaying the
stored bytes keeps the provider's prefix cache warm where a rebuild could differ (a new day,
memory written since). WAL mode lets several processes read while one writes, with a busy
timeout for concurrent writers; each process keeps its own connection (guarded by a lock), so
the store is safe to share across threads and processes.
A deployment with many workers on many machines replaces this by answering
``hermes_session_store`` with a shared store.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hermes_core.plugin import ConfigSection, hookimpl
from hermes_plugins._common.archive_settings import ARCHIVE
from hermes_plugins.archive.sqlite_store import PAGE_SIZE, SQLiteArchive, close_archive_connections, ensure_private
from hermes_plugins.store_health import guard_methods
from hermes_plugins.store_settings import STORE_BACKEND

DB_NAME = "sessions.db"
BUSY_TIMEOUT_MS = 5_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS session_prompts (
    session_id    TEXT PRIMARY KEY,
    system_prompt TEXT NOT NULL,
    model         TEXT NOT NULL DEFAULT '',
    provider      TEXT NOT NULL DEFAULT '',
    updated_at    REAL NOT NULL,
    static_prefix INTEGER
)
"""


#: Kept connections, least recently used first; a process rarely talks to more than one file.
# Process-wide on purpose, not per plugin host: two hosts writing one file through two
# connections would only contend for SQLite's write lock; keyed by pid (fork-safe).
_connections: OrderedDict[tuple[int, str], tuple[sqlite3.Connection, threading.Lock]] = OrderedDict()
_registry_lock = threading.Lock()
MAX_CONNECTIONS = 8


def close_connections() -> None:
    """Close every kept connection of this process (tests; before deleting a database)."""
    close_archive_connections()
    with _registry_lock:
        for conn, _lock in _connections.values():
            conn.close()
        _connections.clear()


class SQLiteSessionStore(SQLiteArchive):
    """``get_prompt`` / ``put_prompt`` over one SQLite file (created on first write), and the
    session archive (``archive_*``, see ``hermes_plugins.archive.sqlite_store``) in the same file.

    One connection per (process, file) is kept open and shared by every store object on that
    file: opening and closing a WAL database per call would checkpoint and delete the WAL file
    each time (an fsync, ~10 ms), while a kept connection commits in tens of microseconds.
    """

    def __init__(self, path: str | Path, *, archive_max_bytes: int | None = None) -> None:
        self.path = Path(path)
        self.archive_max_bytes = archive_max_bytes

    def _connection(self) -> tuple[sqlite3.Connection, threading.Lock]:
        key = (os.getpid(), str(self.path.absolute()))  # a forked child opens its own
        with _registry_lock:
            entry = _connections.get(key)
            if entry is not None:
                _connections.move_to_end(key)
            else:
                # 0600 before SQLite creates it (its -wal/-shm files copy the mode): the store
                # holds prompts built from users' files.
                ensure_private(self.path)
                conn = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                    check_same_thread=False,
                )
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                # WAL: readers never block the writer; NORMAL sync survives process crashes
                # (only an OS crash can lose the last commits, and a lost prompt is rebuilt).
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's (the archive's rows)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute(_SCHEMA)
                columns = {row[1] for row in conn.execute("PRAGMA table_info(session_prompts)")}
                if "static_prefix" not in columns:  # a database from before the column
                    conn.execute("ALTER TABLE session_prompts ADD COLUMN static_prefix INTEGER")
                entry = _connections[key] = (conn, threading.Lock())
                while len(_connections) > MAX_CONNECTIONS:
                    _key, (old, old_lock) = _connections.popitem(last=False)
                    with old_lock:  # never close under a statement in flight
                        old.close()
            return entry

    def forget_connections(self) -> None:
        """Drop this process's connections to the file (it is being set aside)."""
        super().forget_connections()
        with _registry_lock:
            entry = _connections.pop((os.getpid(), str(self.path.absolute())), None)
        if entry is not None:
            conn, lock = entry
            with lock:
                conn.close()

    def _column(self, column: str, session_id: str) -> Any:
        # ``column`` is one of this module's literals, never caller input.
        if not self.path.exists():
            return None
        conn, lock = self._connection()
        with lock:
            row = conn.execute(
                f"SELECT {column} FROM session_prompts WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else row[0]

    def get_prompt(self, session_id: str) -> str | None:
        """The stored prompt of ``session_id``, or ``None`` when there is none."""
        prompt = self._column("system_prompt", session_id)
        return prompt if isinstance(prompt, str) else None

    def put_prompt(
        self, session_id: str, prompt: str, *, model: str = "", provider: str = "",
        static_prefix: int | None = None,
    ) -> None:
        """Store (or replace) the prompt of ``session_id``; ``static_prefix``: how many of its
        leading characters are the stable layer (a cache layout's first block)."""
        conn, lock = self._connection()
        with lock:
            conn.execute(
                "INSERT INTO session_prompts "
                "(session_id, system_prompt, model, provider, updated_at, static_prefix) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET "
                "system_prompt = excluded.system_prompt, model = excluded.model, "
                "provider = excluded.provider, updated_at = excluded.updated_at, "
                "static_prefix = excluded.static_prefix",
                (session_id, prompt, model or "", provider or "", time.time(), static_prefix),
            )

    def get_static_prefix(self, session_id: str) -> int | None:
        """The ``static_prefix`` stored with the prompt of ``session_id``, or ``None``."""
        chars = self._column("static_prefix", session_id)
        return chars if isinstance(chars, int) else None

    def session_prompts(self) -> list[dict[str, Any]]:
        """Every stored prompt's session: ``session_id``, ``model``, ``provider``,
        ``updated_at`` (epoch seconds), ``chars`` (``hermes-ctx sessions``)."""
        if not self.path.exists():
            return []
        conn, lock = self._connection()
        with lock:
            rows = conn.execute(
                "SELECT session_id, model, provider, updated_at, length(system_prompt) "
                "FROM session_prompts ORDER BY session_id"
            ).fetchall()
        return [{"session_id": r[0], "model": r[1], "provider": r[2], "updated_at": r[3], "chars": r[4]} for r in rows]

    def delete_prompt(self, session_id: str) -> bool:
        """Forget the stored prompt of ``session_id``; whether there was one."""
        if not self.path.exists():
            return False
        conn, lock = self._connection()
        with lock:
            return conn.execute("DELETE FROM session_prompts WHERE session_id = ?", (session_id,)).rowcount > 0

    def __repr__(self) -> str:
        return f"SQLiteSessionStore({str(self.path)!r})"


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.sessions_cli import sessions_group

    if "sessions" not in cli.commands:
        cli.add_command(sessions_group)


@hookimpl
def hermes_config_sections() -> ConfigSection[Any]:
    return STORE_BACKEND


@hookimpl(trylast=True)
def hermes_session_store(home: Path, config: Any) -> SQLiteSessionStore | None:
    if config.section(STORE_BACKEND).backend == "redis" and importlib.util.find_spec("redis") is not None:
        return None  # the redis_store plugin answers (config decides, never hook order)
    return SQLiteSessionStore(Path(home) / DB_NAME, archive_max_bytes=config.section(ARCHIVE).max_bytes_per_session)


guard_methods(SQLiteSessionStore, ("get_prompt", "put_prompt", "get_static_prefix", "session_prompts", "delete_prompt"))

"""The archive half of the embedded session store: compacted messages in SQLite with FTS5.

Lives in the store file (``sessions.db``) beside the prompts, in two tables: ``archive_messages``
(one row per archived message: session, reference, role, tool, call id, turn, position, what
replaced it, the fields the text leaves out) and ``archive_fts`` (an FTS5 table over the text
and the CamelCase parts of its identifiers, one for all sessions, so a search is one index
lookup whatever the number of sessions). The default ``unicode61`` tokenizer splits
``snake_case``, paths and dotted names into their parts and queries are phrases of parts, so
``parse_config``, ``src/app/main.py`` and ``KeyError`` are found as written; ``identifier_parts``
adds ``Key Error`` so ``Error`` finds ``KeyError`` too. The tokenising is SQLite's (C); the only
Python per text is ``identifier_parts`` (a byte translate and ``find``).

Writes are handed to one writer thread per (process, file), in transactions of a bounded size
(each table one ``executemany``), so a compaction that archives 100,000 messages costs the
session the diff, not the indexing; every read flushes first (``archive_flush``), so what was
archived is always found, and the writer is drained at interpreter exit. The table grows
linearly: each message is stored once (the FTS table holds the text, the other table the
metadata).
"""

from __future__ import annotations

import bisect
import itertools
import json
import operator
import os
import queue
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from hermes_core.plugin import get_logger, open_regular
from hermes_plugins.archive.batch import ArchivedBatch
from hermes_plugins.archive.search import FTS_COLUMNS, fts_search, identifier_parts, indexable, query_words
from hermes_plugins.store_health import guard_methods

log = get_logger(__name__)

BUSY_TIMEOUT_MS = 10_000
#: The page size of a store file SQLite creates (an existing file keeps its own: a WAL database
#: cannot change it). The archive writes tens of MB of texts of 0.2-50 KB per compaction; with
#: 16 KB pages most fit in their row's page instead of a chain of 4 KB overflow pages, and the
#: SQLite part of archiving 100k messages (60 MB) costs ~25% less CPU (measured 0.55 vs 0.75 s).
PAGE_SIZE = 16_384
#: Rows and text bytes per write transaction: other processes' writers wait at most this long.
BATCH_ROWS = 2_000
BATCH_BYTES = 8 << 20

#: Each session's archived bytes (``SUM(archive_messages.bytes)``), kept in the same
#: transaction as every insert and delete of its entries, so the per-session cap
#: (``archive.max_bytes_per_session``) is checked after a write with one key lookup instead of a
#: sum over the session's rows (25-30 ms at 100k entries), and stays exact with several
#: processes writing one file (write transactions are serialised: ``BEGIN IMMEDIATE``).
_TOTALS_TABLE = (
    "CREATE TABLE IF NOT EXISTS archive_totals (session_id TEXT PRIMARY KEY, bytes INTEGER NOT NULL DEFAULT 0)"
)
_ADD_BYTES = (
    "INSERT INTO archive_totals (session_id, bytes) VALUES (?, ?) "
    "ON CONFLICT(session_id) DO UPDATE SET bytes = bytes + excluded.bytes"
)

#: Id ranges of a session's entries written but not yet in archive_fts (one row per batch).
_UNINDEXED_TABLE = (
    "CREATE TABLE IF NOT EXISTS archive_unindexed (session_id TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL)"
)

ARCHIVE_SCHEMA = (
    """
    CREATE TABLE IF NOT EXISTS archive_messages (
        id          INTEGER PRIMARY KEY,
        session_id  TEXT NOT NULL,
        ref         TEXT NOT NULL,
        seq         INTEGER NOT NULL DEFAULT 0,
        role        TEXT NOT NULL DEFAULT '',
        tool        TEXT NOT NULL DEFAULT '',
        call_id     TEXT NOT NULL DEFAULT '',
        turn        INTEGER NOT NULL DEFAULT 0,
        position    INTEGER NOT NULL DEFAULT 0,
        replaced_by INTEGER NOT NULL DEFAULT -1,
        turn_start  INTEGER NOT NULL DEFAULT 0,
        created_at  REAL NOT NULL,
        bytes       INTEGER NOT NULL DEFAULT 0,
        extra       TEXT,
        text        TEXT,
        UNIQUE (session_id, ref)
    )
    """,
    "CREATE INDEX IF NOT EXISTS archive_by_age ON archive_messages (session_id, created_at, seq)",
    # Contentless: the text is archive_messages.text; the index is filled at the first search.
    f"CREATE VIRTUAL TABLE IF NOT EXISTS archive_fts USING fts5({FTS_COLUMNS}, content='')",
    _UNINDEXED_TABLE,
    "CREATE INDEX IF NOT EXISTS archive_unindexed_by_session ON archive_unindexed (session_id)",
    _TOTALS_TABLE,
    """
    CREATE TABLE IF NOT EXISTS session_engine_state (
        session_id TEXT PRIMARY KEY,
        engine     TEXT NOT NULL,
        state      TEXT NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS session_leases (
        session_id TEXT PRIMARY KEY,
        token      TEXT NOT NULL,
        expires_at REAL NOT NULL
    )
    """,
)

# Process-wide on purpose, not per plugin host: a database file is the process's resource (one
# connection and one writer thread per file, whichever host's session writes), keyed by pid so a
# forked child opens its own; ``close_connections()`` releases them (before deleting a file).
_connections: dict[tuple[int, str], tuple[sqlite3.Connection, threading.Lock]] = {}
_writers: dict[tuple[int, str], _Writer] = {}
_registry_lock = threading.Lock()


def ensure_private(path: Path) -> None:
    """Create ``path`` readable by its owner only (0600), or tighten an existing regular file.

    Only a regular file is ever touched: a chmod through a symlink planted as the store (to
    ``/dev/zero``, say) would change the device for the whole machine when run as root. What is
    not a regular file raises ``FileRefused``, naming the path, which the store reports.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL never follows a symlink: an existing name, link or not, goes the other way.
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600)
    except FileExistsError:
        try:
            seen = os.stat(path)
        except OSError:
            seen = None
        if seen is not None and stat.S_ISREG(seen.st_mode) and not seen.st_mode & 0o077:
            # Already private: never open it. Closing any descriptor of a file drops every POSIX
            # lock this process holds on it, so a close here would silently release the SQLite
            # locks of this process's other connections (another thread mid-transaction) and
            # let another process write at the same time: "disk I/O error", lost archive rows.
            return
        fd, info = open_regular(path)
        try:
            if info.st_mode & 0o077:
                os.fchmod(fd, 0o600)
        except OSError:
            pass  # not ours to change (another owner): the store still works
        finally:
            os.close(fd)
        return
    os.close(fd)


def _open(path: Path) -> sqlite3.Connection:
    ensure_private(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before WAL: it fixes a new file's page size
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.create_function("hermes_idents", 1, identifier_parts, deterministic=True)
    fts = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'archive_fts'").fetchone()
    meta = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'archive_unindexed'").fetchone()
    totals = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'archive_totals'").fetchone()
    if fts is None or meta is None or totals is None or "content=''" not in fts[0]:
        with _transaction(conn):  # one process creates or upgrades; the others find it done
            fill = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'archive_totals'").fetchone() is None
            _upgrade(conn)
            for statement in ARCHIVE_SCHEMA:
                conn.execute(statement)
            if fill:  # a file written before the running totals: summed once, here
                conn.execute(
                    "INSERT INTO archive_totals (session_id, bytes) "
                    "SELECT session_id, COALESCE(SUM(bytes), 0) FROM archive_messages GROUP BY session_id"
                )
    return conn


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring a file written before 2026-12 (the text inside an FTS table with content, filled at
    every write) to the current layout: the text moves to ``archive_messages.text`` and the
    contentless index is rebuilt at the next search. Once per file, in the caller's transaction."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'archive_fts'").fetchone()
    if row is None or "content=''" in row[0]:
        return
    columns = {r[1] for r in conn.execute("PRAGMA table_info(archive_messages)")}
    if not columns:  # no entries were ever written
        conn.execute("DROP TABLE archive_fts")
        return
    if "text" not in columns:
        conn.execute("ALTER TABLE archive_messages ADD COLUMN text TEXT")
    conn.execute("UPDATE archive_messages SET text = (SELECT text FROM archive_fts WHERE rowid = archive_messages.id)")
    conn.execute("DROP TABLE archive_fts")
    conn.execute(_UNINDEXED_TABLE)
    conn.execute(
        "INSERT INTO archive_unindexed (session_id, lo, hi) "
        "SELECT session_id, MIN(id), MAX(id) FROM archive_messages GROUP BY session_id"
    )
    log.info("archive_store_upgraded", entries=conn.execute("SELECT COUNT(*) FROM archive_messages").fetchone()[0])


def _key(path: Path) -> tuple[int, str]:
    return (os.getpid(), str(path.absolute()))  # a forked child opens its own


def _reader(path: Path) -> tuple[sqlite3.Connection, threading.Lock]:
    key = _key(path)
    with _registry_lock:
        entry = _connections.get(key)
        if entry is None:
            entry = _connections[key] = (_open(path), threading.Lock())
        return entry


def _writer(path: Path) -> _Writer:
    key = _key(path)
    with _registry_lock:
        writer = _writers.get(key)
        if writer is None:
            writer = _writers[key] = _Writer(path)
        return writer


def close_archive_connections() -> None:
    """Drain the writers and close every archive connection of this process."""
    with _registry_lock:
        writers = list(_writers.values())
        _writers.clear()
        conns = list(_connections.values())
        _connections.clear()
    for writer in writers:
        writer.flush_quietly()
    for conn, lock in conns:
        with lock:
            conn.close()


class _Writer:
    """Writes queued archive batches of one (process, file) in bounded transactions, on a
    thread started when a batch is queued and gone once the queue is empty.

    No thread idles between compactions and a closed session leaves none behind (``flush``
    joins it); the thread is not a daemon, so batches queued before the host exits are written
    (the interpreter joins it) without an ``atexit`` callback of ours.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.queue: queue.Queue[tuple[str, Sequence[Mapping[str, Any]], int | None]] = queue.Queue()
        self.error: BaseException | None = None
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._leaving: threading.Thread | None = None  # found the queue empty, returning

    def put(self, session_id: str, records: Sequence[Mapping[str, Any]], max_bytes: int | None) -> None:
        with self._lock:
            self.queue.put((session_id, records, max_bytes))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"hermes-archive-{self.path.name}")
                self._thread.start()

    def flush(self) -> None:
        self.queue.join()
        with self._lock:
            # The running writer, else the one on its way out (it may still be closing its
            # connection): a flushed writer has no thread left alive.
            thread = self._thread or self._leaving
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=60)  # on its way out unless a batch came meanwhile
        error, self.error = self.error, None
        if error is not None:
            raise error

    def flush_quietly(self) -> None:
        try:
            self.flush()
        except Exception:  # noqa: BLE001 - logged by the writer when it failed
            pass

    def _next(self) -> tuple[str, Sequence[Mapping[str, Any]], int | None] | None:
        with self._lock:
            try:
                return self.queue.get_nowait()
            except queue.Empty:
                self._thread = None  # a later put starts a new thread
                self._leaving = threading.current_thread()
                return None

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        while True:
            item = self._next()
            if item is None:
                if conn is not None:
                    conn.close()
                return
            try:
                if conn is None:
                    conn = _open(self.path)
                session_id, records, max_bytes = item
                _write(conn, session_id, records)
                if max_bytes is not None:
                    removed = _prune_bytes(conn, session_id, max_bytes)
                    if removed:
                        log.warning(
                            "archive_retention_applied", session=session_id, removed=removed,
                            max_bytes_per_session=max_bytes, path=str(self.path),
                        )
            except BaseException as exc:  # noqa: BLE001 - reported at the next flush
                log.error("archive_write_failed", path=str(self.path), error=f"{type(exc).__name__}: {exc}")
                self.error = exc
            finally:
                self.queue.task_done()


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (``IMMEDIATE``: no upgrade deadlock between writers)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite already rolled back on some errors (SQLITE_FULL)
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _dump_extra(extra: Any) -> str | None:
    if not extra:
        return None
    try:
        return orjson.dumps(extra, default=str).decode("utf-8")
    except TypeError:  # keys that are not strings, lone surrogates: the slow, lenient path
        return json.dumps(extra, ensure_ascii=False, default=str)


#: The columns of ``archive_messages`` an insert binds, in the order of ``_INSERT``'s values.
_ROW_COLUMNS = ("ref", "seq", "role", "tool", "call_id", "turn", "position", "replaced_by", "turn_start",
                "created_at", "bytes", "extra", "text")
_INSERT = (
    f"INSERT OR IGNORE INTO archive_messages (id, session_id, {', '.join(_ROW_COLUMNS)}) "
    f"VALUES ({', '.join('?' * (len(_ROW_COLUMNS) + 2))})"
)
_DEFAULTS = {"seq": 0, "role": "", "tool": "", "call_id": "", "turn": 0, "position": 0, "replaced_by": -1}


def _table(records: Sequence[Mapping[str, Any]]) -> dict[str, Sequence[Any]]:
    """``records`` as the columns of ``_ROW_COLUMNS`` (one sequence each): a batch of the
    session archive gives its columns as they are, any other sequence of record dicts is read
    key by key. The text is made storable (``indexable``), ``bytes`` is its UTF-8 size and
    ``extra`` its JSON; each is worked out only for the entries that need it (the non-ASCII
    texts, the entries with an extra), the rest is C (``map``, slices)."""
    if isinstance(records, ArchivedBatch):
        columns: dict[str, Sequence[Any]] = dict(records.columns())
        columns["created_at"] = [records.created_at] * len(records)
    else:
        now = time.time()
        columns = {k: [r.get(k, default) for r in records] for k, default in _DEFAULTS.items()}
        columns["ref"] = [r["ref"] for r in records]
        columns["text"] = [r["text"] for r in records]
        columns["extra"] = [r.get("extra") for r in records]
        columns["turn_start"] = [1 if r.get("turn_start") else 0 for r in records]
        columns["created_at"] = [r.get("created_at") or now for r in records]
    texts = list(columns["text"])
    sizes = list(map(len, texts))
    for i in itertools.compress(range(len(texts)), map(operator.not_, map(str.isascii, texts))):
        texts[i] = text = indexable(texts[i])
        sizes[i] = len(text.encode("utf-8"))
    extras = columns["extra"]
    dumped: list[str | None] = [None] * len(extras)
    for i in itertools.compress(range(len(extras)), extras):
        dumped[i] = _dump_extra(extras[i])
    return {**columns, "text": texts, "bytes": sizes, "extra": dumped}


def _insert(conn: sqlite3.Connection, session_id: str, table: Mapping[str, Sequence[Any]], start: int, end: int) -> None:
    """Insert rows ``start:end`` of ``table`` (``_table``; inside a transaction) in one
    ``executemany`` of tuples zipped from the columns, and note their id range as not yet
    indexed. A reference already archived for the session is ignored (the first is kept:
    ``UNIQUE (session_id, ref)``); its id stays unused, a gap the range lookups skip."""
    if end <= start:
        return
    # The write lock is held: nobody else takes ids until COMMIT, so the batch's are one range.
    first = conn.execute("SELECT COALESCE(MAX(id), 0) FROM archive_messages").fetchone()[0] + 1
    last = first + (end - start) - 1
    rows = zip(range(first, last + 1), itertools.repeat(session_id), *(table[k][start:end] for k in _ROW_COLUMNS))
    inserted = conn.executemany(_INSERT, rows).rowcount
    if inserted == end - start:
        added = sum(table["bytes"][start:end])
    else:  # some references were archived already (ignored): count the rows that went in
        added = conn.execute(
            "SELECT COALESCE(SUM(bytes), 0) FROM archive_messages WHERE id BETWEEN ? AND ?", (first, last)
        ).fetchone()[0]
    conn.execute(_ADD_BYTES, (session_id, added))
    conn.execute("INSERT INTO archive_unindexed (session_id, lo, hi) VALUES (?, ?, ?)", (session_id, first, last))


def _index(conn: sqlite3.Connection, session_id: str) -> int:
    """Index the entries of ``session_id`` written since its last search; how many. The
    tokenising (SQLite's C tokenizer, ``identifier_parts`` for CamelCase) is paid here, once per
    entry and only for a session that is searched, not by the compaction that archived it."""
    if conn.execute("SELECT 1 FROM archive_unindexed WHERE session_id = ? LIMIT 1", (session_id,)).fetchone() is None:
        return 0
    started = time.perf_counter()
    count = 0
    with _transaction(conn):
        ranges = conn.execute("SELECT rowid, lo, hi FROM archive_unindexed WHERE session_id = ?", (session_id,)).fetchall()
        for _rowid, lo, hi in ranges:
            count += conn.execute(
                "INSERT INTO archive_fts (rowid, text, idents) SELECT id, text, hermes_idents(text) "
                "FROM archive_messages WHERE id BETWEEN ? AND ? AND session_id = ?",
                (lo, hi, session_id),
            ).rowcount
        for i in range(0, len(ranges), 500):
            chunk = [r[0] for r in ranges[i:i + 500]]
            conn.execute(f"DELETE FROM archive_unindexed WHERE rowid IN ({','.join('?' * len(chunk))})", chunk)
    log.debug("archive_indexed", session=session_id, entries=count, ms=round((time.perf_counter() - started) * 1000, 1))
    return count


def _write(conn: sqlite3.Connection, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
    """Write ``records`` in transactions of at most ``BATCH_ROWS`` rows and about ``BATCH_BYTES``
    of text (the row that reaches it is the last)."""
    table = _table(records)
    total = list(itertools.accumulate(table["bytes"], initial=0))
    count = len(total) - 1
    start = 0
    while start < count:
        end = min(start + BATCH_ROWS, count, bisect.bisect_left(total, total[start] + BATCH_BYTES, start + 1))
        with _transaction(conn):
            _insert(conn, session_id, table, start, end)
        start = end


def _delete_ids(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Delete entries by id, in their own transaction (see ``_delete_rows``)."""
    with _transaction(conn):
        _delete_rows(conn, ids)


def _delete_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> None:
    """Delete entries by id, inside the caller's transaction: from the index when indexed (a
    contentless table forgets a row given the values it indexed), and their bytes from their
    sessions' running totals."""
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        gone = conn.execute(
            f"SELECT session_id, COALESCE(SUM(bytes), 0) FROM archive_messages WHERE id IN ({marks}) "
            "GROUP BY session_id", chunk,
        ).fetchall()
        conn.executemany(_ADD_BYTES, [(sid, -size) for sid, size in gone])
        conn.execute(
            "INSERT INTO archive_fts (archive_fts, rowid, text, idents) SELECT 'delete', m.id, m.text, "
            f"hermes_idents(m.text) FROM archive_messages AS m WHERE m.id IN ({marks}) AND NOT EXISTS ("
            "SELECT 1 FROM archive_unindexed AS u WHERE u.session_id = m.session_id AND m.id BETWEEN u.lo AND u.hi)",
            chunk,
        )
        conn.execute(f"DELETE FROM archive_messages WHERE id IN ({marks})", chunk)


def _session_bytes(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute("SELECT bytes FROM archive_totals WHERE session_id = ?", (session_id,)).fetchone()
    return int(row[0]) if row is not None else 0


def _prune_bytes(conn: sqlite3.Connection, session_id: str, max_bytes: int) -> int:
    """Remove the session's oldest entries until its archived bytes are at most ``max_bytes``;
    how many went. Under the cap (nearly every write) this is one key lookup; over it, the
    total is read again and the oldest rows deleted in one write transaction, so two
    processes pruning the same session never remove more than the cap asks."""
    if _session_bytes(conn, session_id) <= max_bytes:
        return 0
    ids: list[int] = []
    with _transaction(conn):
        total = _session_bytes(conn, session_id)
        if total > max_bytes:
            rows = conn.execute(
                "SELECT id, bytes FROM archive_messages WHERE session_id = ? ORDER BY created_at, seq", (session_id,)
            )
            for row_id, size in rows:  # oldest first, read only as far as needed
                if total <= max_bytes:
                    break
                ids.append(row_id)
                total -= size
            rows.close()
            _delete_rows(conn, ids)
    return len(ids)


class SQLiteArchive:
    """The ``archive_*`` methods of the SQLite session store (see ``hermes_plugins.archive.session_archive``)."""

    path: Path
    archive_max_bytes: int | None = None
    def archive_put(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        """Queue ``records`` for writing; a later read (or ``archive_flush``) waits for them."""
        if records:
            # A batch of the session archive builds its records on the writer thread.
            batch = records if isinstance(records, ArchivedBatch) else list(records)
            _writer(self.path).put(session_id, batch, self.archive_max_bytes)

    def forget_connections(self) -> None:
        """Drop this process's connection and writer for the file (it is being set aside)."""
        key = _key(self.path)
        with _registry_lock:
            entry = _connections.pop(key, None)
            _writers.pop(key, None)
        if entry is not None:
            conn, lock = entry
            with lock:
                conn.close()

    def archive_flush(self) -> None:
        """Wait until every queued record of this process is written (raises a write error)."""
        key = _key(self.path)
        with _registry_lock:
            writer = _writers.get(key)
        if writer is not None:
            writer.flush()

    def _query(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        self.archive_flush()
        if not self.path.exists():
            return []
        conn, lock = _reader(self.path)
        with lock:
            return conn.execute(sql, params).fetchall()

    def _index(self, session_id: str) -> None:
        self.archive_flush()
        if self.path.exists():
            conn, lock = _reader(self.path)
            with lock:
                _index(conn, session_id)

    def archive_get(self, session_id: str, ref: str) -> dict[str, Any] | None:
        rows = self._entries("session_id = ? AND ref = ?", (session_id, ref), extra=True)
        if not rows:
            return None
        del rows[0]["id"]
        return rows[0]

    def _entries(self, where: str, params: Sequence[Any], *, extra: bool = False) -> list[dict[str, Any]]:
        """The entries ``WHERE where``, with their text (and ``extra`` when asked)."""
        columns = "id, ref, role, tool, call_id, turn, position, replaced_by, created_at, seq, text"
        rows = self._query(f"SELECT {columns}{', extra' if extra else ''} FROM archive_messages WHERE {where}", params)
        names = columns.split(", ")
        out = []
        for row in rows:
            entry = dict(zip(names, row))
            if entry["text"] is None:
                entry["text"] = ""
            if extra:
                entry["extra"] = json.loads(row[-1]) if row[-1] else {}
            out.append(entry)
        return out

    def archive_refs(self, session_id: str) -> set[str]:
        return {r[0] for r in self._query("SELECT ref FROM archive_messages WHERE session_id = ?", (session_id,))}

    _STATS = (
        "SELECT session_id, COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(turn_start), 0), "
        "MIN(created_at), MAX(created_at), COALESCE(MAX(seq), 0) "
        "FROM archive_messages {} GROUP BY session_id ORDER BY session_id"
    )

    def archive_stats(self, session_id: str) -> dict[str, Any]:
        found = self._stats("WHERE session_id = ?", (session_id,))
        return found[0] if found else {
            "session_id": session_id, "count": 0, "bytes": 0, "turns": 0, "first": None, "last": None,
            "max_seq": 0,
        }

    def archive_sessions(self) -> list[dict[str, Any]]:
        return self._stats("", ())

    def _stats(self, where: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {"session_id": s, "count": c, "bytes": b, "turns": t, "first": f, "last": la, "max_seq": q}
            for s, c, b, t, f, la, q in self._query(self._STATS.format(where), params)
        ]

    def archive_search(self, session_id: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """The best ``limit`` entries of ``session_id`` for ``query`` (BM25): every word first,
        any word when no entry has them all."""
        words = query_words(query)
        limit = max(1, int(limit))
        # Ranked on the FTS table of every session, then this session's winners kept:
        # intersecting with the session first would walk all its entries (8 ms at 100k).
        # ``+session_id``: look the few ids up by key, never walk the session's age index.
        mine_sql = "SELECT id FROM archive_messages WHERE +session_id = ? AND id IN ({})"
        self._index(session_id)
        ranked = fts_search(
            self._query, "archive_fts", words, limit,
            keep=lambda ids: {r[0] for r in self._query(mine_sql.format(",".join("?" * len(ids))), (session_id, *ids))},
        )
        if not ranked:
            return []
        ranked = ranked[: limit + 8]
        score = dict(ranked)
        rows = self._entries(f"id IN ({','.join('?' * len(score))}) AND +session_id = ?", (*score, session_id))
        rows.sort(key=lambda r: (score[r["id"]], -r["seq"]))
        for row in rows:
            row["score"] = score[row.pop("id")]
        return rows[:limit]

    def archive_prune(
        self, *, max_age_days: float | None = None, max_bytes_per_session: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, int]:
        """Remove entries older than ``max_age_days`` and the oldest beyond the per-session
        byte cap; ``{"removed": n}``."""
        self.archive_flush()
        if not self.path.exists():
            return {"removed": 0}
        conn, lock = _reader(self.path)
        removed = 0
        with lock:
            if max_age_days is not None:
                cutoff = time.time() - float(max_age_days) * 86_400
                sql = "SELECT id FROM archive_messages WHERE created_at < ?"
                params: tuple[Any, ...] = (cutoff,)
                if session_id is not None:
                    sql += " AND session_id = ?"
                    params += (session_id,)
                ids = [r[0] for r in conn.execute(sql, params).fetchall()]
                if ids:
                    _delete_ids(conn, ids)
                removed += len(ids)
            if max_bytes_per_session is not None:
                sessions = [session_id] if session_id is not None else [
                    r[0] for r in conn.execute("SELECT DISTINCT session_id FROM archive_messages").fetchall()
                ]
                for sid in sessions:
                    removed += _prune_bytes(conn, sid, int(max_bytes_per_session))
        return {"removed": removed}

    # -- compaction leases (hermes_core.lease): one row per session, taken when expired

    def _lease_write(self, sql: str, params: Sequence[Any]) -> int:
        ensure_private(self.path)
        conn, lock = _reader(self.path)
        with lock:
            return conn.execute(sql, params).rowcount

    def acquire_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        now = time.time()
        return self._lease_write(
            "INSERT INTO session_leases (session_id, token, expires_at) VALUES (?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET token = excluded.token, expires_at = excluded.expires_at "
            "WHERE session_leases.expires_at <= ?",
            (session_id, token, now + ttl_ms / 1000, now),
        ) == 1

    def renew_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        return self._lease_write(
            "UPDATE session_leases SET expires_at = ? WHERE session_id = ? AND token = ?",
            (time.time() + ttl_ms / 1000, session_id, token),
        ) == 1

    def release_lease(self, session_id: str, token: str) -> None:
        self._lease_write("DELETE FROM session_leases WHERE session_id = ? AND token = ?", (session_id, token))

    # -- engine state (ContextEngine.export_state), so a restarted process keeps blocks and cooldowns

    def put_engine_state(self, session_id: str, engine: str, state: Mapping[str, Any]) -> None:
        self._lease_write(
            "INSERT INTO session_engine_state (session_id, engine, state, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(session_id) DO UPDATE SET engine = excluded.engine, state = excluded.state, "
            "updated_at = excluded.updated_at",
            (session_id, engine, json.dumps(state, ensure_ascii=False, default=str), time.time()),
        )

    def get_engine_state(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        if not self.path.exists():
            return None
        conn, lock = _reader(self.path)
        with lock:
            row = conn.execute(
                "SELECT engine, state FROM session_engine_state WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else (row[0], json.loads(row[1]))

    def archive_delete(self, session_id: str) -> int:
        """Remove everything archived for ``session_id``; how many entries went."""
        self.archive_flush()
        if not self.path.exists():
            return 0
        conn, lock = _reader(self.path)
        with lock:
            ids = [r[0] for r in conn.execute(
                "SELECT id FROM archive_messages WHERE session_id = ?", (session_id,)
            ).fetchall()]
            _delete_ids(conn, ids)
            conn.execute(
                "DELETE FROM archive_totals WHERE session_id = ? AND NOT EXISTS "
                "(SELECT 1 FROM archive_messages WHERE session_id = ?)", (session_id, session_id),
            )
        return len(ids)


# Every public store call heals a corrupt file once and reports other faults as StoreError.
guard_methods(SQLiteArchive, (
    "archive_put", "archive_flush", "archive_get", "archive_refs", "archive_stats", "archive_sessions",
    "archive_search", "archive_prune", "acquire_lease", "renew_lease", "release_lease",
    "put_engine_state", "get_engine_state", "archive_delete",
))

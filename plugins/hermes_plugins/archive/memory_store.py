"""The in-memory archive store: the archive of a session whose store keeps none (or no store),
and the held batches a failing store refused; ``has_archive`` tells a store that keeps one."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_plugins.archive.batch import ArchivedBatch
from hermes_plugins.archive.search import ArchiveIndex, query_words


class MemoryArchiveStore:
    """The archive of sessions whose store keeps none (or no store): lives with the process.

    Implements the same ``archive_*`` contract as the SQLite store (tests run both).
    """

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._index: dict[str, ArchiveIndex] = {}
        self._order = 0
        self._pending: list[tuple[str, Sequence[Mapping[str, Any]], float]] = []
        self._lock = threading.Lock()

    def archive_put(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep ``records`` (a list's dicts are kept as they are: the caller hands them over).

        An ``ArchivedBatch`` is kept as it is until the next read of the store, which builds its
        records (the request path that archives pays for a list append)."""
        with self._lock:
            self._pending.append((session_id, records, time.time()))
            if not isinstance(records, ArchivedBatch):
                self._drain()  # a caller's list may be reused: take its dicts now

    def _drain(self) -> None:
        """Store the batches put since the last read (the lock is held)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for session_id, records, now in pending:
            rows = self._rows.setdefault(session_id, {})
            index = self._index.setdefault(session_id, ArchiveIndex())
            for record in records:
                ref = record["ref"]
                if ref in rows:
                    continue
                row = record if type(record) is dict else dict(record)
                row.setdefault("created_at", now)
                self._order += 1
                row["_order"] = self._order
                rows[ref] = row
                index.add(ref, row["text"])

    def archive_flush(self) -> None:
        with self._lock:
            self._drain()

    def archive_get(self, session_id: str, ref: str) -> dict[str, Any] | None:
        with self._lock:
            self._drain()
            row = self._rows.get(session_id, {}).get(ref)
        return dict(row) if row is not None else None

    def archive_refs(self, session_id: str) -> set[str]:
        with self._lock:
            self._drain()
            return set(self._rows.get(session_id, {}))

    def archive_stats(self, session_id: str) -> dict[str, Any]:
        with self._lock:
            self._drain()
            rows = list(self._rows.get(session_id, {}).values())
        return _stats(session_id, rows)

    def archive_sessions(self) -> list[dict[str, Any]]:
        with self._lock:
            self._drain()
            ids = [sid for sid, rows in self._rows.items() if rows]
        return [self.archive_stats(sid) for sid in sorted(ids)]

    def archive_search(self, session_id: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        words = query_words(query)
        with self._lock:
            self._drain()
            rows = self._rows.get(session_id, {})
            index = self._index.get(session_id)
            keys = index.search(words, limit) if index is not None else []
            return [dict(rows[ref]) for ref in keys]

    def archive_prune(
        self, *, max_age_days: float | None = None, max_bytes_per_session: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, int]:
        removed = 0
        cutoff = time.time() - max_age_days * 86_400 if max_age_days else None
        with self._lock:
            self._drain()
            for sid, rows in self._rows.items():
                if session_id is not None and sid != session_id:
                    continue
                ordered = sorted(rows.values(), key=lambda r: (r["created_at"], r["_order"]))
                total = sum(map(_text_bytes, ordered))
                for row in ordered:
                    old = cutoff is not None and row["created_at"] < cutoff
                    over = max_bytes_per_session is not None and total > max_bytes_per_session
                    if not (old or over):
                        continue
                    total -= _text_bytes(row)
                    del rows[row["ref"]]
                    self._index[sid].remove(row["ref"])
                    removed += 1
        return {"removed": removed}

    def archive_delete(self, session_id: str) -> int:
        with self._lock:
            self._drain()
            self._index.pop(session_id, None)
            return len(self._rows.pop(session_id, {}))


def _text_bytes(row: Mapping[str, Any]) -> int:
    """The UTF-8 size of an entry's text; a lone surrogate (JSON's ``\\ud800``, kept as it was
    archived) counts as its 3 bytes instead of failing the stats or the prune."""
    text = row["text"]
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _stats(session_id: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "count": len(rows),
        "bytes": sum(map(_text_bytes, rows)),
        "turns": sum(1 for r in rows if r.get("turn_start")),
        "first": min((r["created_at"] for r in rows), default=None),
        "last": max((r["created_at"] for r in rows), default=None),
        "max_seq": max((int(r.get("seq") or 0) for r in rows), default=0),
    }


ARCHIVE_METHODS = ("archive_put", "archive_get", "archive_search", "archive_refs", "archive_stats")


def has_archive(store: Any) -> bool:
    """Whether ``store`` implements the archive contract."""
    return store is not None and all(callable(getattr(store, m, None)) for m in ARCHIVE_METHODS)

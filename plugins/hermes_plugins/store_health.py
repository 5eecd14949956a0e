"""SQLite stores that heal: a corrupt file is set aside and a fresh one started; every other
storage fault reaches the host as ``hermes_core.errors.StoreError`` naming the file.

A corrupt ``sessions.db`` used to turn compaction off for good (every later turn ran
uncompacted until the provider overflowed), and a full disk reached the host as a raw
``sqlite3.OperationalError``. ``guard`` wraps a store's public methods: a corrupt file
(SQLITE_CORRUPT, SQLITE_NOTADB) is checked once more on a fresh connection, moved aside to
``<name>.corrupt-<time>`` (with its ``-wal``/``-shm`` files), one warning names both files, and
the call runs once more on a new file; anything else becomes ``StoreError``.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.plugin import StoreError, record_warning

_F = TypeVar("_F", bound=Callable[..., Any])

#: Primary result codes (the low byte of ``sqlite_errorcode``) that mean the file is damaged.
_CORRUPT_CODES = frozenset({sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB})
_heal_lock = threading.Lock()


def is_corrupt(exc: BaseException) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in _CORRUPT_CODES
    text = str(exc).lower()
    return isinstance(exc, sqlite3.DatabaseError) and (
        "malformed" in text or "not a database" in text
    )


def describe(exc: BaseException) -> str:
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    return f"{exc} ({name})"


def _still_corrupt(path: Path) -> bool:
    """Another process (or thread) may have set the file aside already: look again."""
    if not path.exists():
        return False
    try:
        conn = sqlite3.connect(path, timeout=5)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            row = conn.execute("PRAGMA quick_check(1)").fetchone()
            return not row or row[0] != "ok"
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return is_corrupt(exc)


def set_aside(path: Path, cause: BaseException, forget: Callable[[], None]) -> Path | None:
    """Move a corrupt store out of the way (one warning naming both files); ``None`` when the
    file turned out healthy or gone (someone else healed it)."""
    with _heal_lock:
        forget()  # our connections to the damaged file, before it moves
        if not _still_corrupt(path):
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        target = path.with_name(f"{path.name}.corrupt-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
        try:
            os.replace(path, target)
        except FileNotFoundError:
            return None
        for suffix in ("-wal", "-shm"):
            try:
                os.replace(f"{path}{suffix}", f"{target}{suffix}")
            except FileNotFoundError:
                pass
        record_warning(
            "session_store_corrupt",
            f"the session store {path} was corrupt ({describe(cause)}); it was moved aside to "
            f"{target} and a fresh store was started (what it held is in the moved file)",
            path=str(path), moved_to=str(target),
        )
        return target


def guard(method: _F) -> _F:
    """Run a store method; heal a corrupt file once, turn other SQLite faults into StoreError."""

    @functools.wraps(method)
    def guarded(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            if not is_corrupt(exc):
                raise _store_error(self.path, exc) from exc
            set_aside(Path(self.path), exc, self.forget_connections)
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise _store_error(self.path, exc) from exc

    return guarded  # type: ignore[return-value]


def guard_methods(cls: type, names: tuple[str, ...]) -> None:
    for name in names:
        setattr(cls, name, guard(getattr(cls, name)))


def _store_error(path: Any, exc: BaseException) -> StoreError:
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_FULL:
        reason = "the disk is full (or the database reached its size limit)"
    else:
        reason = describe(exc)
    return StoreError(f"session store {path}: {reason}", store=str(path))

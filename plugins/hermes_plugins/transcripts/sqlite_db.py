"""What the SQLite readers share (Hermes Agent's ``state.db``, goose's ``sessions.db``): the
database opened read-only, its tables' columns, and driver errors as one line naming the file."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

from hermes_core.plugin import InvalidMessagesError, TranscriptSource

_T = TypeVar("_T")


def open_readonly(source: TranscriptSource) -> sqlite3.Connection:
    """The database of ``source`` (a file), read-only: reading a session never writes to it."""
    assert source.path is not None
    return sqlite3.connect(f"file:{source.path}?mode=ro", uri=True)


def columns(db: sqlite3.Connection, table: str) -> set[str]:
    """The column names of ``table`` (empty when there is no such table). ``table`` is a
    reader's literal, never input."""
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def schema_of(source: TranscriptSource, *tables: str) -> dict[str, set[str]] | str:
    """The columns of each of ``tables`` in the database of ``source``, or why it could not be
    read (a detector refuses with that reason)."""
    if source.path is None:
        return "an SQLite database must be read from a file"
    try:
        db = open_readonly(source)
        try:
            return {table: columns(db, table) for table in tables}
        finally:
            db.close()
    except sqlite3.Error as exc:
        return f"cannot open the database: {exc}"


def read_database(source: TranscriptSource, read: Callable[[sqlite3.Connection, TranscriptSource], _T],
                  *, reader: str) -> _T:
    """``read(db, source)`` over the database opened read-only with rows by name; a driver
    error is an ``InvalidMessagesError`` naming the file and the reader."""
    try:
        db = open_readonly(source)
    except sqlite3.Error as exc:
        raise InvalidMessagesError(f"{source.name}: cannot open the database: {exc}") from None
    db.row_factory = sqlite3.Row
    try:
        return read(db, source)
    except sqlite3.Error as exc:
        raise InvalidMessagesError(f"{source.name}: cannot read the database: {exc} (read as {reader})") from None
    finally:
        db.close()

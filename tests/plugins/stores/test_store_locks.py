"""SQLite stores keep this process's locks: opening one more connection never releases them.

POSIX advisory locks belong to the process, and closing any descriptor of a file drops all of
them. Every connection of a WAL database holds a shared lock on the file, which tells another
process that it must not take the database over (switch the journal mode, or checkpoint and
delete the WAL when it closes what it thinks is the last connection). A store that opened and
closed the file itself - to check its permissions - whenever it opened one more connection
dropped those locks: the two-process archive test lost a whole session's rows with "disk I/O
error" under load. Whether the lock survives is asked from another process, which may take the
database over only when nobody holds it.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_plugins.archive import sqlite_store as archive_store
from hermes_plugins.archive.sqlite_store import ensure_private
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

_TAKE_OVER = textwrap.dedent(
    """
    import sqlite3, sys
    conn = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)
    try:
        print(conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0])
    except sqlite3.OperationalError as exc:
        print("locked" if "locked" in str(exc) else f"error: {exc}")
    """
)


def _another_process_takes_over(path: Path) -> str:
    done = subprocess.run([sys.executable, "-c", _TAKE_OVER, str(path)], capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.strip()


@pytest.fixture
def in_use(tmp_path: Path) -> Iterator[Path]:
    """A WAL store file with a live connection in this process."""
    path = tmp_path / "sessions.db"
    ensure_private(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    assert _another_process_takes_over(path) == "locked"
    yield path
    conn.close()
    close_connections()


def test_checking_the_store_file_keeps_this_processs_locks(in_use: Path) -> None:
    ensure_private(in_use)
    assert _another_process_takes_over(in_use) == "locked"


def test_opening_more_store_connections_keeps_this_processs_locks(in_use: Path) -> None:
    assert SQLiteSessionStore(in_use).get_prompt("s") is None  # the session store's connection
    archive_store._reader(in_use)  # and the archive's
    assert _another_process_takes_over(in_use) == "locked"


def test_a_loose_store_file_is_still_tightened(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"")
    path.chmod(0o644)
    ensure_private(path)
    assert path.stat().st_mode & 0o777 == 0o600

"""The SQLite archive's running byte totals (``archive_totals``), against the sum they stand for.

With ``archive.max_bytes_per_session`` set, every write checks the session's archived bytes.
The store keeps them per session in the same transaction as each insert and delete, so the
check is one key lookup, and it must stay equal to ``SUM(bytes)`` whatever happens: ignored
duplicate references, non-ASCII texts, prunes by age and by bytes, deletes, a file written
before the totals existed, and several processes writing one session at once.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from hermes_plugins.archive import sqlite_store as archive_store
from hermes_plugins.session_store import SQLiteSessionStore, close_connections


def rec(ref: str, text: str, *, seq: int = 0, created_at: float | None = None) -> dict[str, Any]:
    return {"ref": ref, "seq": seq, "role": "tool", "tool": "terminal", "call_id": f"c_{ref}", "turn": 1,
            "position": 3, "replaced_by": -1, "text": text, "extra": None,
            "created_at": created_at or time.time(), "turn_start": False}


def totals(path: Path) -> tuple[dict[str, int], dict[str, int]]:
    """(the running totals, the sums they stand for), read with a connection of their own."""
    conn = sqlite3.connect(path)
    try:
        kept = dict(conn.execute("SELECT session_id, bytes FROM archive_totals").fetchall())
        summed = dict(conn.execute(
            "SELECT session_id, SUM(bytes) FROM archive_messages GROUP BY session_id").fetchall())
    finally:
        conn.close()
    return {k: v for k, v in kept.items() if v or k in summed}, summed


def test_the_running_totals_follow_every_write_and_delete(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    old = time.time() - 10 * 86_400
    store.archive_put("s1", [rec("m1.1", "x" * 100, created_at=old, seq=1), rec("m1.2", "é" * 50, seq=2)])
    store.archive_put("s1", [rec("m1.2", "ignored: the reference is taken", seq=3), rec("m2.1", "y" * 70, seq=4)])
    store.archive_put("s2", [rec("m1.1", "z" * 30)])
    store.archive_flush()
    kept, summed = totals(path)
    assert kept == summed == {"s1": 100 + 100 + 70, "s2": 30}
    assert store.archive_prune(max_age_days=5)["removed"] == 1
    kept, summed = totals(path)
    assert kept == summed == {"s1": 170, "s2": 30}
    assert store.archive_prune(max_bytes_per_session=80, session_id="s1")["removed"] == 1
    kept, summed = totals(path)
    assert kept == summed == {"s1": 70, "s2": 30}
    assert store.archive_delete("s2") == 1
    assert totals(path) == ({"s1": 70}, {"s1": 70})
    close_connections()


def test_the_cap_applied_after_each_write_keeps_the_newest(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path, archive_max_bytes=250)
    for i in range(6):
        store.archive_put("s", [rec(f"m{i}.1", "a" * 100, seq=i + 1)])
    store.archive_flush()
    kept, summed = totals(path)
    assert kept == summed == {"s": 200}
    assert store.archive_get("s", "m5.1") and store.archive_get("s", "m4.1") and not store.archive_get("s", "m3.1")
    close_connections()


def test_under_the_cap_the_check_is_one_lookup_not_a_sum(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    store.archive_put("s", [rec(f"m1.{i}", "b" * 50, seq=i) for i in range(1, 200)])
    store.archive_flush()
    conn = archive_store._open(path)
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        assert archive_store._prune_bytes(conn, "s", 1 << 30) == 0
        assert not any("archive_messages" in sql for sql in statements), statements
        assert archive_store._prune_bytes(conn, "s", 50 * 150) == 49
    finally:
        conn.close()
    kept, summed = totals(path)
    assert kept == summed == {"s": 50 * 150}
    close_connections()


def test_a_file_from_before_the_totals_gets_them_summed_once(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(path)
    store.archive_put("s1", [rec("m1.1", "c" * 40), rec("m1.2", "d" * 60)])
    store.archive_put("s2", [rec("m1.1", "e" * 5)])
    store.archive_flush()
    close_connections()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE archive_totals")  # as a file written before 2026-12-01 has it
    conn.commit()
    conn.close()
    store = SQLiteSessionStore(path, archive_max_bytes=70)
    store.archive_put("s1", [rec("m2.1", "f" * 20)])
    store.archive_flush()
    kept, summed = totals(path)
    assert kept == summed == {"s1": 20, "s2": 5}  # 120 > 70: the two older entries went (80 > 70 still)
    close_connections()


_WRITER = textwrap.dedent(
    """
    import sys, time
    from hermes_plugins.session_store import SQLiteSessionStore, close_connections
    store = SQLiteSessionStore(sys.argv[1], archive_max_bytes=int(sys.argv[3]))
    name = sys.argv[2]
    for i in range(40):
        store.archive_put("shared", [
            {{"ref": f"{{name}}.{{i}}.{{k}}", "seq": i * 10 + k, "role": "tool", "text": "w" * (50 + k),
              "created_at": time.time(), "turn": i}}
            for k in range(10)
        ])
    store.archive_flush()
    close_connections()
    """
)


def test_two_processes_writing_one_session_keep_the_total_exact(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    # The file, its WAL mode and its schema exist before the two writers start, so the race is
    # between their writes alone (one run under heavy load failed with "database is locked"
    # when both processes set up a new file at once).
    store = SQLiteSessionStore(path)
    store.archive_put("other", [rec("o.1", "x" * 10)])
    store.archive_flush()
    close_connections()
    cap = 20_000
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER.format(), str(path), name, str(cap)])
             for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    kept, summed = totals(path)
    assert kept == summed
    # Both wrote 2 x 40 x 545 bytes; the cap was applied after every write.
    assert cap - 60 < summed["shared"] <= cap

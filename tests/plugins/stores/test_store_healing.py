"""SQLite stores that heal (issue 32): a corrupt ``sessions.db`` is set aside and a fresh one
started, with one warning naming both files, so compaction keeps working; a full disk reaches
the host as ``StoreError``, never a raw ``sqlite3`` exception."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session, StoreError, drain_warnings
from hermes_core.config import load_config
from hermes_plugins.archive import sqlite_store as archive_store
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.session_store import close_connections


def _history(turns: int, word: str = "module") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for t in range(turns):
        messages.append({"role": "user", "content": f"step {t}: run the tests of {word}_{t} " * 6})
        messages.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": f"c{t}", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": f"pytest tests/test_{word}{t}.py"})},
        }]})
        messages.append({"role": "tool", "tool_call_id": f"c{t}",
                         "content": "\n".join(f"{word} line {i} of step {t}" for i in range(120))})
        messages.append({"role": "assistant", "content": f"Step {t} done."})
    messages.append({"role": "user", "content": "Now fix the remaining failures."})
    return messages


def _session(home: Path) -> Session:
    config = load_config(home=home, env={}, data={"archive": {"enabled": True}})
    return Session.open(cwd=str(home), home=str(home), model="gpt-4o", provider="openai",
                        context_length=16_000, config=config, env={})


@pytest.fixture(autouse=True)
def _fresh_connections() -> Any:
    yield
    close_connections()


def _warnings(session: Session, name: str) -> list[Any]:
    # A heal met outside a session step (a host's own archive.search) is recorded in the
    # caller's context (hermes_core.drain_warnings), not in the session's.
    return [w for w in [*session.warnings, *drain_warnings()] if w.kind == name]


def test_a_store_that_is_not_a_database_is_set_aside_and_compaction_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    db.write_bytes(b"this is no SQLite database, just junk left by a crash\n" * 200)
    db.chmod(0o600)
    session = _session(tmp_path)
    messages = _history(40)
    result = session.compress(messages, force=True)
    assert len(result.messages) < len(messages)
    assert archive_of(session).search("module_3")  # archived in the fresh store, found again
    moved = sorted(tmp_path.glob("sessions.db.corrupt-*"))
    assert [p.name for p in moved if not p.name.endswith(("-wal", "-shm"))], moved
    found = _warnings(session, "session_store_corrupt")
    assert len(found) == 1
    assert str(db) in found[0].message and "corrupt-" in found[0].message
    sqlite3.connect(db).execute("SELECT count(*) FROM session_prompts").fetchone()  # a real store now
    session.close()


def test_a_store_damaged_between_turns_heals_on_the_next_compaction(tmp_path: Path) -> None:
    session = _session(tmp_path)
    session.compress(_history(30), force=True)
    session.close()
    close_connections()
    db = tmp_path / "sessions.db"
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the first page's b-tree: sqlite_master unreadable
    db.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    later = _session(tmp_path)
    result = later.compress(_history(40, word="later"), force=True)
    assert len(result.messages) < 40 * 4
    assert archive_of(later).search("later_3")
    assert len(_warnings(later, "session_store_corrupt")) == 1
    later.close()


def test_a_full_disk_reaches_the_host_as_a_store_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = archive_store._open

    def small(path: Path) -> sqlite3.Connection:
        conn = real(path)
        conn.execute("PRAGMA max_page_count = 6")  # SQLITE_FULL past a few pages, as on a full disk
        return conn

    monkeypatch.setattr(archive_store, "_open", small)
    session = _session(tmp_path)
    session.compress(_history(60), force=True)  # the archive write fails on the writer thread
    with pytest.raises(StoreError, match="disk is full") as raised:
        archive_of(session).flush()
    assert str(tmp_path / "sessions.db") in str(raised.value)
    assert not isinstance(raised.value, sqlite3.Error)
    session.compress(_history(60, word="again"), force=True)
    with pytest.raises(StoreError):
        archive_of(session).search("again_3")

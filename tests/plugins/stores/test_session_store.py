"""The session store (SQLite, WAL) and prompt reuse across Session objects and processes (§14)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_core import PluginHost, PromptBlock, PromptContext, Session, hookimpl
from hermes_plugins.session_store import DB_NAME, SQLiteSessionStore


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


ENV = {"HERMES_TIMEZONE": "UTC"}


def day(n: int) -> Any:
    return lambda: datetime(2026, 3, n, 12, tzinfo=UTC)


@pytest.fixture
def events(capture_events: list[dict[str, Any]]) -> Any:
    return capture_events


def build_warnings(session: Session) -> list[Any]:
    # Opening may warn about the engine (an unknown window); reuse itself must warn about nothing.
    return [w for w in session.warnings if not w.kind.startswith("compression_")]


# --- the store itself ---------------------------------------------------------------------


def test_get_put_roundtrip_with_unicode(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "nested" / DB_NAME)
    assert store.get_prompt("s1") is None
    assert not (tmp_path / "nested").exists()  # reading never creates the database
    prompt = "Prompt ☤ with ═ and 中文\n§\nend"
    store.put_prompt("s1", prompt, model="m", provider="p")
    assert store.get_prompt("s1") == prompt
    store.put_prompt("s1", "replaced", model="m2", provider="p")
    assert store.get_prompt("s1") == "replaced"
    assert store.get_prompt("other") is None


def test_database_is_in_wal_mode(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / DB_NAME)
    store.put_prompt("s", "p", model="", provider="")
    conn = sqlite3.connect(tmp_path / DB_NAME)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        row = conn.execute("SELECT model, provider FROM session_prompts WHERE session_id='s'").fetchone()
    finally:
        conn.close()
    assert row == ("", "")


def test_kept_connections_are_bounded_and_reopened(tmp_path: Path) -> None:
    from hermes_plugins import session_store

    stores = [SQLiteSessionStore(tmp_path / f"db{i}" / DB_NAME) for i in range(session_store.MAX_CONNECTIONS + 3)]
    for i, store in enumerate(stores):
        store.put_prompt("s", f"p{i}", model="", provider="")
    assert len(session_store._connections) <= session_store.MAX_CONNECTIONS
    assert [store.get_prompt("s") for store in stores] == [f"p{i}" for i in range(len(stores))]
    session_store.close_connections()
    assert stores[0].get_prompt("s") == "p0"


def test_threads_share_a_store(tmp_path: Path) -> None:
    import threading

    store = SQLiteSessionStore(tmp_path / DB_NAME)

    def work(n: int) -> None:
        for i in range(25):
            store.put_prompt(f"{n}-{i}", f"v{n}{i}", model="", provider="")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(store.get_prompt(f"{n}-{i}") == f"v{n}{i}" for n in range(4) for i in range(25))


def test_several_processes_write_and_read_concurrently(tmp_path: Path) -> None:
    db = tmp_path / DB_NAME
    script = textwrap.dedent(
        f"""
        import sys
        from hermes_plugins.session_store import SQLiteSessionStore
        store = SQLiteSessionStore({str(db)!r})
        worker = sys.argv[1]
        for i in range(40):
            store.put_prompt(f"{{worker}}-{{i}}", f"prompt {{worker}} {{i}}", model="m", provider="p")
            assert store.get_prompt(f"{{worker}}-{{i}}") == f"prompt {{worker}} {{i}}"
        """
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(w)]) for w in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]
    store = SQLiteSessionStore(db)
    assert all(store.get_prompt(f"{w}-{i}") == f"prompt {w} {i}" for w in range(4) for i in range(40))


def test_builtin_store_lives_under_hermes_home(home: Path) -> None:
    host = PluginHost.create(only=(), env={})
    from hermes_core import load_config

    store = host.session_store(home, load_config(data={}, env={}))
    assert isinstance(store, SQLiteSessionStore) and store.path == home / DB_NAME


# --- reuse across Session objects ---------------------------------------------------------


def test_a_second_session_object_replays_the_stored_prompt(home: Path, tmp_path: Path, events: list[Any]) -> None:
    first = Session.open(home=home, cwd=tmp_path, env=ENV, model="gpt-4o", provider="openai",
                         platform="telegram", clock=day(1))
    prompt = first.system_prompt
    assert SQLiteSessionStore(home / DB_NAME).get_prompt(first.session_id) == prompt

    # A day later, with new memory: a rebuild would differ, the replay must not.
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("A new fact.")
    second = Session.open(home=home, cwd=tmp_path, env=ENV, model="gpt-4o", provider="openai",
                          platform="telegram", session_id=first.session_id, clock=day(2))
    assert second.system_prompt == prompt
    assert second.built is not None and second.built.origin == "stored"
    assert build_warnings(second) == []
    assert any(e["event"] == "stored_prompt_reused" for e in events)


def test_reuse_in_another_process(home: Path, tmp_path: Path) -> None:
    session = Session.open(home=home, cwd=tmp_path, env=ENV, model="gpt-4o", provider="openai", clock=day(1))
    prompt = session.system_prompt
    script = textwrap.dedent(
        f"""
        import sys
        from hermes_core import Session
        s = Session.open(home={str(home)!r}, cwd={str(tmp_path)!r}, env={{}}, model="gpt-4o",
                         provider="openai", session_id={session.session_id!r})
        open(sys.argv[1], "w", encoding="utf-8").write(s.system_prompt)
        """
    )
    out = tmp_path / "replayed.txt"
    subprocess.run([sys.executable, "-c", script, str(out)], capture_output=True, timeout=60, check=True)
    assert out.read_text(encoding="utf-8") == prompt


@pytest.mark.parametrize(
    ("model", "provider", "why"),
    [("gpt-5", "openai", "model changed"), ("gpt-4o", "azure", "provider changed")],
)
def test_stale_model_or_provider_rebuilds_and_logs_why(
    home: Path, tmp_path: Path, model: str, provider: str, why: str, events: list[Any]
) -> None:
    first = Session.open(home=home, cwd=tmp_path, env=ENV, model="gpt-4o", provider="openai", clock=day(1))
    old = first.system_prompt
    second = Session.open(home=home, cwd=tmp_path, env=ENV, model=model, provider=provider,
                          session_id=first.session_id, clock=day(1))
    rebuilt = second.system_prompt
    assert rebuilt != old and f"Model: {model}" in rebuilt and f"Provider: {provider}" in rebuilt
    assert second.built is not None and second.built.origin == "built"
    stale = [e for e in events if e["event"] == "stored_prompt_stale"]
    assert len(stale) == 1 and why in stale[0]["reason"] and stale[0]["session_id"] == first.session_id
    assert SQLiteSessionStore(home / DB_NAME).get_prompt(first.session_id) == rebuilt


def test_unknown_session_id_builds_and_stores(home: Path, tmp_path: Path) -> None:
    session = Session.open(home=home, cwd=tmp_path, env=ENV, session_id="fresh-1")
    assert session.built is None
    prompt = session.system_prompt
    assert session.built is not None and session.built.origin == "built"
    assert SQLiteSessionStore(home / DB_NAME).get_prompt("fresh-1") == prompt


def test_invalidate_does_not_restore_the_stored_prompt(home: Path, tmp_path: Path) -> None:
    first = Session.open(home=home, cwd=tmp_path, env=ENV, session_id="s", clock=day(1))
    old = first.system_prompt
    second = Session.open(home=home, cwd=tmp_path, env=ENV, session_id="s", clock=day(2))
    assert second.system_prompt == old
    second.invalidate_system_prompt()
    new = second.system_prompt
    assert "March 02" in new and new != old
    assert SQLiteSessionStore(home / DB_NAME).get_prompt("s") == new


def test_persist_false_never_writes(home: Path, tmp_path: Path) -> None:
    session = Session.open(home=home, cwd=tmp_path, env=ENV, persist=False)
    session.system_prompt
    assert not (home / DB_NAME).exists()


class FailingStore:
    def __init__(self, read: Exception | None = None, write: Exception | None = None) -> None:
        self.read, self.write, self.stored = read, write, None

    def get_prompt(self, session_id: str) -> str | None:
        if self.read:
            raise self.read
        return None

    def put_prompt(self, session_id: str, prompt: str, *, model: str, provider: str) -> None:
        if self.write:
            raise self.write
        self.stored = (session_id, prompt, model, provider)


def store_plugin(store: Any) -> Any:
    class Plugin:
        @hookimpl
        def hermes_session_store(self, home: Path, config: Any) -> Any:
            return store

    return Plugin()


def test_store_failures_are_warnings_not_errors(home: Path, tmp_path: Path) -> None:
    store = FailingStore(read=OSError("disk full"), write=sqlite3.OperationalError("database is locked"))
    host = PluginHost.create(only=(), env={}, plugins=[(store_plugin(store), "flaky_store")])
    session = Session.open(home=home, cwd=tmp_path, env=ENV, host=host, session_id="s")
    prompt = session.system_prompt
    assert "Conversation started" in prompt
    warnings = {w.kind: w.message for w in session.warnings}
    assert "disk full" in warnings["session_store_read_failed"]
    assert "database is locked" in warnings["session_store_write_failed"]
    assert session.system_prompt == prompt  # still cached for this process


def test_a_replacement_store_receives_model_and_provider(home: Path, tmp_path: Path) -> None:
    store = FailingStore()
    host = PluginHost.create(only=(), env={}, plugins=[(store_plugin(store), "shared_store")])
    session = Session.open(home=home, cwd=tmp_path, env=ENV, host=host, model="m", provider="p")
    prompt = session.system_prompt
    assert store.stored == (session.session_id, prompt, "m", "p")
    assert not (home / DB_NAME).exists()


def test_stored_prompt_is_verbatim_even_when_blocks_would_fail(home: Path, tmp_path: Path) -> None:
    first = Session.open(home=home, cwd=tmp_path, env=ENV, session_id="s", model="x")
    prompt = first.system_prompt

    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> PromptBlock:
            raise RuntimeError("never called on reuse")

    host = PluginHost.create(only=(), env={}, plugins=[(Broken(), "broken")])
    again = Session.open(home=home, cwd=tmp_path, env=ENV, session_id="s", model="x", host=host,
                         clock=lambda: datetime.now(UTC) + timedelta(days=3))
    assert again.system_prompt == prompt
    assert build_warnings(again) == []


# --- the stable/dynamic split survives a replay ---------------------------------------------


def _anthropic_system(session: Session) -> Any:
    history = [{"role": "user", "content": "hello"}]
    return session.request(history, provider="anthropic")["system"]


def test_a_replayed_prompt_is_split_into_the_same_cache_blocks(home: Path, tmp_path: Path) -> None:
    first = Session.open(home=home, cwd=tmp_path, env=ENV, model="claude-x", provider="anthropic", clock=day(1))
    system = _anthropic_system(first)
    assert first.built is not None
    assert system[0]["text"].strip() == first.built.layers["stable"].strip() and len(system) == 2
    assert "".join(block["text"] for block in system) == first.system_prompt
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("A new fact.")
    second = Session.open(home=home, cwd=tmp_path, env=ENV, model="claude-x", provider="anthropic",
                          session_id=first.session_id, clock=day(2))
    assert _anthropic_system(second) == system  # same bytes, same breakpoints: the cache holds
    assert second.built is not None and second.built.origin == "stored"
    assert second.static_system_prefix == first.static_system_prefix != ""


def test_a_store_without_the_split_point_replays_one_block(home: Path, tmp_path: Path) -> None:
    class MinimalStore(FailingStore):
        def get_prompt(self, session_id: str) -> str | None:
            return self.stored[1] if self.stored else None

    store = MinimalStore()
    host = PluginHost.create(env={}, plugins=[(store_plugin(store), "minimal_store")])
    first = Session.open(home=home, cwd=tmp_path, env=ENV, host=host, session_id="s", provider="anthropic")
    assert len(_anthropic_system(first)) == 2  # put_prompt got no static_prefix: it has no such kwarg
    second = Session.open(home=home, cwd=tmp_path, env=ENV, host=host, session_id="s", provider="anthropic")
    system = _anthropic_system(second)
    assert second.built is not None and second.built.origin == "stored"
    assert second.static_system_prefix == ""
    assert len(system) == 1 and system[0]["text"] == first.system_prompt


def test_a_database_from_before_the_split_column_is_migrated(home: Path) -> None:
    from hermes_plugins.session_store import close_connections

    path = home / DB_NAME
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE session_prompts (session_id TEXT PRIMARY KEY, system_prompt TEXT NOT NULL, "
        "model TEXT NOT NULL DEFAULT '', provider TEXT NOT NULL DEFAULT '', updated_at REAL NOT NULL)"
    )
    conn.execute("INSERT INTO session_prompts VALUES ('old', 'An old prompt.', '', '', 0)")
    conn.commit()
    conn.close()
    close_connections()
    store = SQLiteSessionStore(path)
    assert store.get_prompt("old") == "An old prompt." and store.get_static_prefix("old") is None
    store.put_prompt("new", "Stable.\n\nRest.", static_prefix=7)
    assert store.get_static_prefix("new") == 7


def test_storing_a_prompt_makes_no_directory_once_the_store_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # put_prompt runs on every Session.open; the folder is made when the connection is first
    # opened, so a later put must not cost a mkdir syscall.
    store = SQLiteSessionStore(tmp_path / "nested" / DB_NAME)
    store.put_prompt("s1", "first")
    calls: list[Path] = []
    monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: calls.append(self))
    store.put_prompt("s1", "second")
    store.put_prompt("s2", "third")
    assert calls == []
    assert store.get_prompt("s1") == "second"

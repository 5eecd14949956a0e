"""The archive store contract, run against every store (SQLite; in-memory; Redis later)."""

from __future__ import annotations

import sqlite3
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_plugins.archive.memory_store import MemoryArchiveStore, has_archive
from hermes_plugins.archive.search import ArchiveError
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from redis_support import redis_server

StoreFactory = Callable[[Path], Any]


def sqlite_store(tmp: Path) -> Any:
    return SQLiteSessionStore(tmp / "sessions.db")


def memory_store(tmp: Path) -> Any:
    return MemoryArchiveStore()


STORES = {"sqlite": sqlite_store, "memory": memory_store}


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


_prefixes = iter(range(1_000_000))


@pytest.fixture(params=[*sorted(STORES), "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "redis":
        from hermes_plugins.redis_store import RedisSessionStore

        made = RedisSessionStore(request.getfixturevalue("redis_url"), key_prefix=f"t{next(_prefixes)}:")
    else:
        made = STORES[request.param](tmp_path)
    yield made
    close_connections()


def test_prompts_round_trip_with_their_split(store: Any) -> None:
    if not hasattr(store, "put_prompt"):
        pytest.skip("the in-memory archive keeps no prompts")
    assert store.get_prompt("s1") is None
    store.put_prompt("s1", "You are X.\n\nModel: m", model="m", provider="p", static_prefix=10)
    assert store.get_prompt("s1") == "You are X.\n\nModel: m" and store.get_static_prefix("s1") == 10
    store.put_prompt("s1", "again", model="m", provider="p")
    assert store.get_prompt("s1") == "again" and store.get_prompt("s2") is None


def rec(ref: str, text: str, *, role: str = "tool", tool: str = "terminal", turn: int = 1,
        seq: int = 0, created_at: float | None = None, **extra: Any) -> dict[str, Any]:
    return {"ref": ref, "seq": seq, "role": role, "tool": tool, "call_id": f"c_{ref}", "turn": turn,
            "position": 3, "replaced_by": 2, "text": text, "extra": extra or {"role": role},
            "created_at": created_at or time.time(), "turn_start": role == "user"}


def test_contract_methods_exist(store: Any) -> None:
    assert has_archive(store)


def test_put_then_get_returns_the_original_byte_for_byte(store: Any) -> None:
    text = "line 1\r\n\ttabs  and  spaces\x00nul \u4e2d\u6587 \U0001F600 end\n"
    store.archive_put("s1", [rec("m1.3", text, tool_call_id="c1")])
    row = store.archive_get("s1", "m1.3")
    assert row["text"] == text and row["role"] == "tool" and row["tool"] == "terminal"
    assert row["turn"] == 1 and row["call_id"] == "c_m1.3" and row["extra"]["tool_call_id"] == "c1"
    assert store.archive_get("s1", "m9.9") is None
    assert store.archive_get("other", "m1.3") is None  # a reference from another session


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("the helper parse_config failed", "parse_config"),
        ("opened src/hermes_core/archive.py for writing", "src/hermes_core/archive.py"),
        ("opened src/hermes_core/archive.py for writing", "archive.py"),
        ("Traceback: KeyError: 'model'", "KeyError"),
        ("Traceback: KeyError: 'model'", "Error"),
        ("class SessionArchiveStore: pass", "Archive"),
        ("the answer is 48213 exactly", "48213"),
        ("user chose PostgreSQL over MySQL", "postgresql"),
    ],
)
def test_code_identifiers_are_searchable(store: Any, text: str, query: str) -> None:
    store.archive_put("s1", [rec("m1.1", "unrelated chatter about lunch"), rec("m2.1", text)])
    hits = store.archive_search("s1", query, 5)
    assert hits and hits[0]["ref"] == "m2.1"


@pytest.mark.parametrize("query", ['"quoted', '"unbalanced', "star*", "col:on", "NEAR(a b)", "a AND OR", "-x", "^caret"])
def test_fts_syntax_in_a_query_is_text_never_an_error(store: Any, query: str) -> None:
    store.archive_put("s1", [rec("m1.1", 'a "quoted" unbalanced star* col:on NEAR(a b) AND OR -x ^caret')])
    hits = store.archive_search("s1", query, 5)
    assert [h["ref"] for h in hits] == ["m1.1"]


def test_empty_query_is_a_clear_error(store: Any) -> None:
    store.archive_put("s1", [rec("m1.1", "text")])
    for query in ("", "   ", "*", '""'):
        with pytest.raises(ArchiveError, match="empty"):
            store.archive_search("s1", query, 5)


def test_search_ranks_and_limits_and_falls_back_to_any_word(store: Any) -> None:
    store.archive_put("s1", [
        rec("m1.1", "deploy failed on staging"),
        rec("m2.1", "deploy succeeded"),
        rec("m3.1", "nothing relevant"),
    ])
    hits = store.archive_search("s1", "deploy staging", 5)
    assert [h["ref"] for h in hits] == ["m1.1"]
    hits = store.archive_search("s1", "deploy rollback", 5)  # no entry has both words
    assert {h["ref"] for h in hits} == {"m1.1", "m2.1"}
    assert len(store.archive_search("s1", "deploy", 1)) == 1


def test_sessions_are_isolated(store: Any) -> None:
    store.archive_put("a", [rec("m1.1", "secret plan alpha")])
    store.archive_put("b", [rec("m1.1", "other plan beta")])
    assert [h["text"] for h in store.archive_search("a", "plan", 5)] == ["secret plan alpha"]
    assert store.archive_search("b", "alpha", 5) == []
    assert store.archive_refs("a") == {"m1.1"}
    rows = {r["session_id"]: r for r in store.archive_sessions()}
    assert rows["a"]["count"] == 1 and rows["a"]["bytes"] == len("secret plan alpha")


def test_putting_a_ref_twice_keeps_the_first(store: Any) -> None:
    store.archive_put("s1", [rec("m1.1", "first")])
    store.archive_put("s1", [rec("m1.1", "second")])
    assert store.archive_get("s1", "m1.1")["text"] == "first"
    assert store.archive_stats("s1")["count"] == 1


def test_stats_count_turns_for_resume(store: Any) -> None:
    store.archive_put("s1", [rec("m1.1", "u", role="user"), rec("m1.2", "t"), rec("m2.1", "u2", role="user")])
    stats = store.archive_stats("s1")
    assert stats["count"] == 3 and stats["turns"] == 2


def test_prune_by_age_and_by_bytes(store: Any) -> None:
    old = time.time() - 10 * 86_400
    store.archive_put("s1", [rec("m1.1", "x" * 100, created_at=old, seq=1),
                             rec("m2.1", "y" * 100, seq=2), rec("m3.1", "z" * 100, seq=3)])
    store.archive_put("s2", [rec("m1.1", "w" * 100, created_at=old)])
    assert store.archive_prune(max_age_days=5, session_id="s1")["removed"] == 1
    assert store.archive_get("s1", "m1.1") is None and store.archive_get("s2", "m1.1") is not None
    assert store.archive_prune(max_bytes_per_session=150)["removed"] == 1
    assert store.archive_get("s1", "m2.1") is None and store.archive_get("s1", "m3.1") is not None
    assert store.archive_search("s1", "yyyy", 5) == [] or all(h["ref"] != "m2.1" for h in store.archive_search("s1", "y" * 100, 5))
    assert store.archive_delete("s2") == 1 and store.archive_get("s2", "m1.1") is None


def test_sqlite_store_file_is_private_and_grows_linearly(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    sizes = []
    for batch in range(3):
        store.archive_put("s1", [rec(f"m{batch}.{i}", f"entry {batch} {i} " + "word " * 200) for i in range(1_500)])
        store.archive_flush()
        with sqlite3.connect(tmp_path / "sessions.db") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            pages, size = conn.execute("PRAGMA page_count").fetchone()[0], conn.execute("PRAGMA page_size").fetchone()[0]
        sizes.append(pages * size)
    assert stat.S_IMODE((tmp_path / "sessions.db").stat().st_mode) == 0o600
    growth = [b - a for a, b in zip([0, *sizes], sizes)]
    assert max(growth) < 1.5 * min(growth), sizes
    assert sizes[-1] < 3 * 1_500 * 1_100 * 2.5  # text stored once, plus the index


@pytest.mark.parametrize("first", ["prompt", "archive"])
def test_a_new_store_file_gets_16k_pages_and_an_old_4k_file_keeps_working(tmp_path: Path, first: str) -> None:
    new = SQLiteSessionStore(tmp_path / "new" / "sessions.db")
    if first == "prompt":  # whichever connection creates the file sets the page size
        new.put_prompt("s1", "prompt", model="m")
    new.archive_put("s1", [rec("m1.1", "ParseError in the new file")])
    assert new.archive_search("s1", "ParseError", 5)[0]["ref"] == "m1.1"
    with sqlite3.connect(tmp_path / "new" / "sessions.db") as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 16_384
    old_path = tmp_path / "old" / "sessions.db"
    old_path.parent.mkdir()
    with sqlite3.connect(old_path) as conn:  # a file made before: 4 KB pages, WAL
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE keep (x)")
    old_path.chmod(0o600)
    old = SQLiteSessionStore(old_path)
    old.put_prompt("s1", "prompt", model="m")
    old.archive_put("s1", [rec(f"m1.{i}", f"entry {i} ParseError " + "w " * 3_000) for i in range(50)])
    assert len(old.archive_search("s1", "ParseError", 100)) == 50 and old.get_prompt("s1") == "prompt"
    with sqlite3.connect(old_path) as conn:
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    close_connections()


def test_sqlite_writes_survive_another_store_object_and_a_closed_connection(tmp_path: Path) -> None:
    SQLiteSessionStore(tmp_path / "sessions.db").archive_put("s1", [rec("m1.1", "kept across objects")])
    close_connections()  # drains the writer first
    again = SQLiteSessionStore(tmp_path / "sessions.db")
    assert again.archive_get("s1", "m1.1")["text"] == "kept across objects"
    assert again.get_prompt("s1") is None  # the prompt table still answers


def test_an_entry_pruned_after_it_was_searched_is_no_longer_found(store: Any) -> None:
    old = time.time() - 10 * 86_400
    store.archive_put("s1", [rec("m1.1", "ParseError in loader", created_at=old, seq=1),
                             rec("m2.1", "ParseError in writer", seq=2)])
    assert {h["ref"] for h in store.archive_search("s1", "Error", 5)} == {"m1.1", "m2.1"}
    assert store.archive_prune(max_age_days=5)["removed"] == 1
    assert [h["ref"] for h in store.archive_search("s1", "Error", 5)] == ["m2.1"]
    store.archive_put("s1", [rec("m3.1", "another ParseError", seq=3)])
    assert {h["ref"] for h in store.archive_search("s1", "ParseError", 5)} == {"m2.1", "m3.1"}


def test_text_with_a_lone_surrogate_is_archived_and_found(store: Any) -> None:
    if type(store).__name__ == "RedisSessionStore":
        pytest.skip("the Redis client encodes strictly before the archive sees the text")
    store.archive_put("s1", [rec("m1.1", "decoded \ud800 from JSON near marker_word")])
    hits = store.archive_search("s1", "marker_word", 5)
    assert [h["ref"] for h in hits] == ["m1.1"]
    kept = store.archive_get("s1", "m1.1")["text"]
    assert kept.startswith("decoded ")
    stats = store.archive_stats("s1")  # counted, and prunable, like any other entry
    assert stats["count"] == 1 and stats["bytes"] == len(kept.encode("utf-8", "surrogatepass"))
    assert store.archive_prune(max_bytes_per_session=10)["removed"] == 1 and store.archive_get("s1", "m1.1") is None


_OLD_LAYOUT = (  # the archive tables as written before 2026-12: the text inside the FTS table
    "CREATE TABLE archive_messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, ref TEXT NOT NULL, "
    "seq INTEGER NOT NULL DEFAULT 0, role TEXT NOT NULL DEFAULT '', tool TEXT NOT NULL DEFAULT '', "
    "call_id TEXT NOT NULL DEFAULT '', turn INTEGER NOT NULL DEFAULT 0, position INTEGER NOT NULL DEFAULT 0, "
    "replaced_by INTEGER NOT NULL DEFAULT -1, turn_start INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL, "
    "bytes INTEGER NOT NULL DEFAULT 0, extra TEXT, UNIQUE (session_id, ref))",
    "CREATE INDEX archive_by_age ON archive_messages (session_id, created_at, seq)",
    "CREATE VIRTUAL TABLE archive_fts USING fts5(text, idents, sid)",
    "INSERT INTO archive_messages (id, session_id, ref, role, created_at, bytes, extra) "
    "VALUES (7, 's1', 'm1.1', 'tool', 1.0, 31, '{\"role\": \"tool\"}')",
    "INSERT INTO archive_fts (rowid, text, idents, sid) VALUES (7, 'raised KeyError in parse_config', 'Key Error', 's1')",
)


def test_a_store_file_in_the_earlier_layout_is_upgraded_without_losing_an_entry(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with sqlite3.connect(path) as conn:
        for statement in _OLD_LAYOUT:
            conn.execute(statement)
    store = SQLiteSessionStore(path)
    assert store.archive_get("s1", "m1.1")["text"] == "raised KeyError in parse_config"
    store.archive_put("s1", [rec("m2.1", "unrelated"), rec("m3.1", "another parse_config call")])
    assert [h["ref"] for h in store.archive_search("s1", "Error parse_config", 5)] == ["m1.1"]
    assert {h["ref"] for h in store.archive_search("s1", "parse_config", 5)} == {"m1.1", "m3.1"}
    assert store.archive_stats("s1")["count"] == 3


def _fts_rowids(path: Path, word: str) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT rowid FROM archive_fts WHERE archive_fts MATCH ?", (word,))]


def test_sqlite_indexes_a_session_at_its_first_search_not_when_it_is_archived(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "sessions.db")
    store.archive_put("s1", [rec("m1.1", "ParseError in loader"), rec("m2.1", "ParseError in writer")])
    store.archive_put("s2", [rec("m1.1", "ParseError elsewhere")])
    store.archive_flush()
    assert _fts_rowids(tmp_path / "sessions.db", "ParseError") == []  # archived, not yet tokenised
    assert {h["ref"] for h in store.archive_search("s1", "ParseError", 5)} == {"m1.1", "m2.1"}
    assert len(_fts_rowids(tmp_path / "sessions.db", "ParseError")) == 2  # s1 only: s2 was not searched
    assert [h["text"] for h in store.archive_search("s2", "Error", 5)] == ["ParseError elsewhere"]
    # a pruned entry leaves the index too, indexed (s1's) or not (s3's)
    old = time.time() - 10 * 86_400
    store.archive_put("s3", [rec("m1.1", "ParseError stale", created_at=old)])
    store.archive_put("s1", [rec("m3.1", "ParseError ancient", created_at=old)])
    store.archive_search("s1", "ParseError", 5)
    assert store.archive_prune(max_age_days=5)["removed"] == 2
    assert _fts_rowids(tmp_path / "sessions.db", "ancient") == [] and _fts_rowids(tmp_path / "sessions.db", "stale") == []
    assert store.archive_search("s3", "ParseError", 5) == []


def test_the_newest_sequence_number_outlives_a_prune(store: Any) -> None:
    old = time.time() - 10 * 86_400
    store.archive_put("s1", [rec("m1.1", "first", created_at=old, seq=1),
                             rec("m1.2", "second", created_at=old, seq=2),
                             rec("m2.1", "third", seq=3)])
    assert store.archive_stats("s1")["max_seq"] == 3
    assert store.archive_prune(max_age_days=5)["removed"] == 2
    stats = store.archive_stats("s1")
    assert stats["count"] == 1 and stats["max_seq"] == 3


def test_a_session_resumed_after_a_prune_numbers_past_what_is_left(store: Any) -> None:
    from hermes_plugins.archive.session_archive import SessionArchive

    old = time.time() - 10 * 86_400
    store.archive_put("s1", [rec(f"m1.{i}", f"early entry {i}", created_at=old, seq=i) for i in range(1, 5)]
                      + [rec("m2.1", "late entry one", seq=5), rec("m2.2", "late entry two", seq=6)])
    assert {h["ref"] for h in store.archive_search("s1", "late", 5)} == {"m2.1", "m2.2"}  # index loaded
    assert store.archive_prune(max_age_days=5)["removed"] == 4
    resumed = SessionArchive(session_id="s1", store=store)
    before = [{"role": "tool", "tool_call_id": "c9", "content": "resumed OperationalError: no such column"},
              {"role": "user", "content": "go on"}]
    resumed.record(before, before[1:])
    if hasattr(store, "archive_flush"):
        store.archive_flush()
    hits = store.archive_search("s1", "OperationalError", 5)
    assert hits and "resumed OperationalError" in (store.archive_get("s1", hits[0]["ref"]) or {}).get("text", "")
    assert store.archive_stats("s1")["max_seq"] > 6

"""Benchmark: the archive's cost against the compaction it records, search, and store growth.

Run: ``python -m pytest tests/benchmarks/bench_recall.py -q -p no:randomly --benchmark-only -s``

1. ``Session.compress`` of a 100,000-message history with the archive on against the same call
   with ``archive.enabled: false`` (fresh sessions, interleaved rounds): the archive's share is
   ``(on - off) / off``, goal <= 1.5. The store's background writer is then drained and timed
   on its own (``flush_ms``: FTS indexing of everything archived, off the session's path).
2. ``Session.handle_tool_call("context_search", ...)`` over 100,000 archived messages: median
   <= 5 ms, reported with the ratio to a bare FTS5 MATCH of the same words on the same file.
3. Store growth: database bytes per archived text byte at 25k, 50k and 100k messages (linear:
   the figure stays flat).

The histories are ``bench_compressor.synthetic_history``; ``HERMES_BENCH_SCALE_100K`` (default
0.1 here: ~43 MB of tool content) scales the tool-result sizes.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from bench_compressor import synthetic_history
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from hermes_core import Session
from hermes_core.archive import fts_match, message_text, query_words
from hermes_core.config import load_config

SCALE = float(os.environ.get("HERMES_BENCH_SCALE_100K", "0.1"))
PLANTED = {
    "psycopg2.OperationalError: could not connect": "psycopg2.OperationalError",
    "wrote services/billing/invoice_renderer.py": "services/billing/invoice_renderer.py",
    "throughput measured: 48213 requests per minute": "48213",
    "Decision: keep the legacy CSV exporter": "legacy CSV exporter",
    "raised KeyError in parse_config_section": "parse_config_section",
}


@pytest.fixture(scope="module")
def history() -> list[dict[str, Any]]:
    messages = synthetic_history(100_000, scale=SCALE)
    for k, fact in enumerate(PLANTED):
        i = 1_000 + k * 17_000
        while messages[i].get("role") != "tool":
            i += 1
        messages[i] = {**messages[i], "content": messages[i]["content"] + "\n" + fact}
    return messages


def _session(home: Path, sid: str, archive: bool) -> Session:
    config = load_config(data={"archive": {"enabled": archive, "max_bytes_per_session": None}})
    return Session.open(cwd=home, home=home, model="m", context_length=200_000, session_id=sid, config=config)


def test_archiving_a_compaction_vs_the_compaction(benchmark: Any, history: list[dict[str, Any]], tmp_path: Path) -> None:
    on: list[float] = []
    off: list[float] = []
    flush: list[float] = []
    archived = 0
    for r in range(5):
        order = (True, False) if r % 2 == 0 else (False, True)
        for archive in order:
            session = _session(tmp_path, f"bench-{r}-{archive}", archive)
            gc.collect()
            t0 = time.perf_counter()
            out = session.compress(history).messages
            t1 = time.perf_counter()
            (on if archive else off).append(t1 - t0)
            if archive:
                session.archive.flush()
                flush.append(time.perf_counter() - t1)
                archived = len(session.archive)
            del out
    ratios = [(a - b) / b for a, b in zip(on, off, strict=True)]
    info = {
        "messages": len(history),
        "archived_per_compaction": archived,
        "compress_off_median_ms": round(statistics.median(off) * 1000, 1),
        "compress_on_median_ms": round(statistics.median(on) * 1000, 1),
        "archive_share_median": round(statistics.median(ratios), 3),
        "archive_share_max": round(max(ratios), 3),
        "flush_median_ms": round(statistics.median(flush) * 1000, 1),
    }
    benchmark.extra_info.update(info)
    print(f"\narchive vs compaction: {info}")
    close_connections()
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert statistics.median(ratios) <= 1.5


@pytest.fixture(scope="module")
def archived(history: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]]]:
    home = tmp_path_factory.mktemp("recall-home")
    store = SQLiteSessionStore(home / "sessions.db")
    growth: list[tuple[int, int]] = []
    text_bytes = 0
    for start in range(0, 100_000, 25_000):
        records = []
        for j in range(start, start + 25_000):
            text = message_text(history[j])
            text_bytes += len(text.encode("utf-8", "surrogatepass"))
            records.append({"ref": f"m{j // 4}.{j % 4 + 1}", "seq": j, "role": history[j].get("role", ""),
                            "tool": "", "call_id": "", "turn": j // 4, "position": j, "replaced_by": -1,
                            "text": text, "extra": None})
        store.archive_put("big", records)
        store.archive_flush()
        with sqlite3.connect(home / "sessions.db") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        growth.append((text_bytes, size))
    return home, growth


def test_search_over_100k_archived_messages(benchmark: Any, archived: tuple[Path, list[tuple[int, int]]]) -> None:
    home, _growth = archived
    session = Session.open(cwd=home, home=home, model="m", session_id="big")
    floor_conn = sqlite3.connect(home / "sessions.db")
    mine: list[float] = []
    floor: list[float] = []
    queries = list(PLANTED.values()) + ["closed", "def return", "https api example"]
    for _ in range(15):
        for q in queries:
            t0 = time.perf_counter()
            answer = session.handle_tool_call("context_search", {"query": q})
            mine.append(time.perf_counter() - t0)
            assert '"hits": [{' in answer
            match = f"{{text idents}} : ({fts_match(query_words(q))})"
            t0 = time.perf_counter()
            floor_conn.execute("SELECT rowid FROM archive_fts WHERE archive_fts MATCH ? LIMIT 5", (match,)).fetchall()
            floor.append(time.perf_counter() - t0)
    per_query = {q: round(statistics.median(mine[i::len(queries)]) * 1000, 3) for i, q in enumerate(queries)}
    for fact, key in PLANTED.items():
        answer = session.handle_tool_call("context_search", {"query": key})
        assert fact in answer, key
    info = {
        "archived": 100_000,
        "search_median_ms": round(statistics.median(mine) * 1000, 3),
        "search_p90_ms": round(sorted(mine)[int(len(mine) * 0.9)] * 1000, 3),
        "bare_match_median_ms": round(statistics.median(floor) * 1000, 3),
        "per_query_median_ms": per_query,
        "ratio_median": round(statistics.median([a / b for a, b in zip(mine, floor, strict=True)]), 2),
    }
    benchmark.extra_info.update(info)
    print(f"\ncontext_search over 100k: {info}")
    benchmark.pedantic(session.handle_tool_call, args=("context_search", {"query": "48213"}), rounds=20, iterations=1)
    assert statistics.median(mine) <= 0.005


def test_store_grows_linearly(benchmark: Any, archived: tuple[Path, list[tuple[int, int]]]) -> None:
    _home, growth = archived
    per_byte = [round(size / text, 3) for text, size in growth]
    steps = [
        round((s2 - s1) / (t2 - t1), 3) for (t1, s1), (t2, s2) in zip(growth, growth[1:], strict=False)
    ]
    info = {"db_bytes_per_text_byte": per_byte, "step_bytes_per_text_byte": steps,
            "db_mb_at_100k": round(growth[-1][1] / 1e6, 1), "text_mb_at_100k": round(growth[-1][0] / 1e6, 1)}
    benchmark.extra_info.update(info)
    print(f"\nstore growth: {info}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    close_connections()
    assert max(steps) <= 1.3 * min(steps)

"""Benchmark: the archive's cost against the compaction it records, search, and store growth.

Run: ``python -m pytest tests/benchmarks/bench_recall.py -q -p no:randomly --benchmark-only -s``

1. The public path: ``Session.compress`` (forced) of a 100,000-message history with the archive
   on against the same call with the archive plugin blocked (fresh sessions, interleaved rounds,
   the same history), for the SQLite store and for the in-memory archive (``persist=False``).
   Times are CPU seconds (the machine's other load left out), each part timed on the thread
   that runs it. Reported, as ratios to the compaction without the archive (process CPU):
   ``request`` (``SessionArchive.record``: the diff, the records, the marks, the hand-over),
   ``store`` (the SQLite writer thread's transactions), ``archiving`` (request + store: what
   a compaction costs the archive; goal <= 1.5),
   ``index`` (the FTS5 indexing, paid at the first ``context_search`` after the compaction)
   and ``total`` (all of it). The same parts are shown against the one-pass floor
   (``bench_compressor.reference_pass``: chars/4 + xxh3 of the same history), which does not
   move when the compaction gets faster.
2. ``Session.handle_tool_call("context_search", ...)`` over 100,000 archived messages: median
   <= 5 ms, reported with the ratio to a bare FTS5 MATCH of the same words on the same file.
3. Store growth: database bytes per archived text byte at 25k, 50k, 75k and 100k messages,
   index included (linear: the figure stays flat).

The histories are ``bench_compressor.synthetic_history``; ``HERMES_BENCH_SCALE_100K`` (default
0.1 here: ~60 MB of archived text) scales the tool-result sizes; ``HERMES_BENCH_ROUNDS``
(default 2) sets the interleaved rounds of part 1.
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
from bench_compressor import reference_pass, synthetic_history

from hermes_core import Session
from hermes_core.config import load_config
from hermes_plugins.archive import sqlite_store as archive_store
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.archive.search import fts_match, message_text, query_words
from hermes_plugins.archive.session_archive import SessionArchive
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

SCALE = float(os.environ.get("HERMES_BENCH_SCALE_100K", "0.1"))
ROUNDS = int(os.environ.get("HERMES_BENCH_ROUNDS", "2"))
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


def _session(home: Path, sid: str, archive: bool, persist: bool) -> Session:
    # Off = the archive plugin blocked (no recorder, no archive columns in the session's pass).
    config = load_config(data={"archive": {"max_bytes_per_session": None},
                               "plugins": {"disabled": [] if archive else ["archive"]}})
    return Session.open(cwd=home, home=home, model="m", context_length=200_000, session_id=sid,
                        config=config, persist=persist)


def _cpu(fn: Any) -> tuple[float, Any]:
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


@pytest.mark.parametrize("persist", [True, False], ids=["sqlite", "memory"])
def test_archiving_a_compaction_vs_the_compaction(
    benchmark: Any, history: list[dict[str, Any]], tmp_path: Path, persist: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each part of the archive's cost is timed where it runs (CPU of its own thread), so no
    # part is the difference of two noisy 10-second measurements.
    spent: dict[str, list[float]] = {"request": [], "store": []}
    for module, name, part in ((SessionArchive, "record", "request"), (archive_store, "_write", "store")):
        real = getattr(module, name)

        def timed(*args: Any, _real: Any = real, _part: str = part, **kwargs: Any) -> Any:
            start = time.thread_time()
            try:
                return _real(*args, **kwargs)
            finally:
                spent[_part].append(time.thread_time() - start)

        monkeypatch.setattr(module, name, timed)
    cpu: dict[str, list[float]] = {k: [] for k in ("off", "request", "store", "index", "floor")}
    wall: dict[str, list[float]] = {"off": [], "on": []}
    archived = 0
    for r in range(ROUNDS):
        for archive in ((True, False) if r % 2 == 0 else (False, True)):
            session = _session(tmp_path, f"bench-{r}-{archive}", archive, persist)
            gc.collect()
            spent["request"].clear()
            spent["store"].clear()
            t0 = time.perf_counter()
            took, result = _cpu(lambda s=session: s.compress(history))
            wall["on" if archive else "off"].append(time.perf_counter() - t0)
            assert len(result.messages) < len(history) // 10
            del result
            if not archive:
                cpu["off"].append(took)
            else:
                archive_of(session).flush()
                took, answer = _cpu(lambda s=session: s.handle_tool_call("context_search", {"query": "48213"}))
                assert "throughput measured: 48213" in answer
                cpu["index"].append(took)
                cpu["request"].append(sum(spent["request"]))
                cpu["store"].append(sum(spent["store"]))
                archived = len(archive_of(session))
            session.close()
        gc.collect()
        cpu["floor"].append(_cpu(lambda: reference_pass(history))[0])
    if persist:
        close_connections()
    off = statistics.median(cpu["off"])
    floor = statistics.median(cpu["floor"])
    archiving = [q + s for q, s in zip(cpu["request"], cpu["store"], strict=True)]
    total = [a + i for a, i in zip(archiving, cpu["index"], strict=True)]
    parts = (("request", cpu["request"]), ("store", cpu["store"]), ("archiving", archiving),
             ("index", cpu["index"]), ("total", total))
    ratio = {k: round(statistics.median(v) / off, 3) for k, v in parts}
    info = {
        "store": "sqlite" if persist else "memory", "messages": len(history), "archived": archived,
        "compress_off_cpu_ms": round(off * 1000, 1),
        "floor_cpu_ms": round(floor * 1000, 1),
        "compress_off_vs_floor": round(off / floor, 1),
        "compress_wall_off_on_ms": [round(statistics.median(wall[k]) * 1000, 1) for k in ("off", "on")],
        "cpu_ms": {k: round(statistics.median(v) * 1000, 1) for k, v in parts},
        "ratios_to_compaction": ratio,
        # The compaction is getting faster (its goal: <= 10x the floor); these do not move with it.
        "ratios_to_floor": {k: round(statistics.median(v) / floor, 1) for k, v in parts},
    }
    benchmark.extra_info.update(info)
    print(f"\narchive vs compaction: {info}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert ratio["archiving"] <= 1.5


@pytest.fixture(scope="module")
def archived(history: list[dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[int, int]], float]:
    home = tmp_path_factory.mktemp("recall-home")
    store = SQLiteSessionStore(home / "sessions.db")
    growth: list[tuple[int, int]] = []
    text_bytes = 0
    index_cpu = 0.0
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
        index_cpu += _cpu(lambda: store.archive_search("big", "closed", 1))[0]  # the index comes along
        with sqlite3.connect(home / "sessions.db") as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            size = conn.execute("PRAGMA page_count").fetchone()[0] * conn.execute("PRAGMA page_size").fetchone()[0]
        growth.append((text_bytes, size))
    return home, growth, index_cpu


def test_search_over_100k_archived_messages(benchmark: Any, archived: tuple[Path, list[tuple[int, int]], float]) -> None:
    home, _growth, index_cpu = archived
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
        "index_build_cpu_ms": round(index_cpu * 1000, 1),
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


def test_store_grows_linearly(benchmark: Any, archived: tuple[Path, list[tuple[int, int]], float]) -> None:
    _home, growth, _index_cpu = archived
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

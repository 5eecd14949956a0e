"""Benchmark: a forced compress of realistic histories against one ``json.dumps`` of them.

Run: ``python -m pytest tests/benchmarks/bench_compress_realistic.py -q -p no:randomly --benchmark-only -s``

The histories are the shared real sessions scaled to 10,000 and 100,000 messages with distinct
content (``real_corpus``: ~1.6-1.8 kB a message); skipped when the sessions are absent. What a
host calls for ``/compress``: ``Session.open(...)`` then ``session.compress(messages)`` (a fresh
session each sample, ``persist=False``, archive on as by default, the plugin host shared). The
peer, timed interleaved in the same process, is one ``json.dumps`` of the history (what any host
does to send or store it). Issue 29's bars: time <= 5x the peer, and peak traced memory
(``tracemalloc``, measured in runs of their own, outside the clock) <= 1.5x the peer's.

``HERMES_BENCH_ROUNDS`` sets the timed rounds (default 5 at 10k, 3 at 100k). The figures go to
``benchmark.extra_info`` and are printed; docs/performance.md keeps them with date and machine.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from real_corpus import build_corpus, describe

from hermes_core import Session
from hermes_plugins._common import failures

PHASES = ("free_passes", "boundaries", "summary", "assemble", "archive")
TIME_BAR = 5.0
MEMORY_BAR = 1.5


def compress(home: Path, messages: list[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    session = Session.open(cwd=home, home=home, model="gpt-5", provider="openai", context_length=200_000,
                           persist=False, env={})
    result = session.compress(messages)
    return result, dict(session.engine.last_compression_report or {})


def _cold() -> None:
    clear = getattr(failures, "clear_cache", None)
    if callable(clear):
        clear()
    gc.collect()


_CORPORA: dict[int, list[dict[str, Any]] | None] = {}


def corpus(n: int) -> list[dict[str, Any]]:
    if n not in _CORPORA:
        _CORPORA.clear()  # one at a time: the 100k corpus alone is ~1 GB of objects
        gc.collect()
        _CORPORA[n] = build_corpus(n)
    found = _CORPORA[n]
    if found is None:
        pytest.skip("no shared real sessions to build the corpus from")
    return found


def traced_peak(fn: Any) -> int:
    _cold()
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("n", [10_000, 100_000], ids=["10k", "100k"])
def test_forced_compress_vs_json_dumps(benchmark: Any, tmp_path: Path, n: int) -> None:
    messages = corpus(n)
    rounds = int(os.environ.get("HERMES_BENCH_ROUNDS", "5" if n == 10_000 else "3"))
    compress(tmp_path, messages[:60])  # the shared plugin host is built once, outside the clock
    whole: list[float] = []
    peer: list[float] = []
    phases: dict[str, list[float]] = {phase: [] for phase in PHASES}
    report: dict[str, Any] = {}
    for r in range(rounds):
        for step in (("peer", "whole") if r % 2 == 0 else ("whole", "peer")):
            _cold()
            if step == "peer":
                t0 = time.perf_counter()
                json.dumps(messages)
                peer.append(time.perf_counter() - t0)
                continue
            t0 = time.perf_counter()
            result, report = compress(tmp_path, messages)
            whole.append(time.perf_counter() - t0)
            timings = report.get("timings_ms") or {}
            for phase in PHASES:
                phases[phase].append(float(timings.get(phase, 0.0)) / 1000)
            if r == 0:
                assert len(result.messages) < len(messages)
            del result
    memory_peer = traced_peak(lambda: json.dumps(messages))
    memory_whole = traced_peak(lambda: compress(tmp_path, messages))
    ratios = [w / p for w, p in zip(whole, peer, strict=True)]
    info: dict[str, Any] = {
        **describe(messages),
        "rounds": rounds,
        "json_dumps_median_ms": round(statistics.median(peer) * 1000, 1),
        "compress_median_ms": round(statistics.median(whole) * 1000, 1),
        "time_ratio_median": round(statistics.median(ratios), 2),
        "time_ratio_min": round(min(ratios), 2),
        "json_dumps_peak_mb": round(memory_peer / 1e6, 1),
        "compress_peak_mb": round(memory_whole / 1e6, 1),
        "memory_ratio": round(memory_whole / memory_peer, 2),
        "status": report.get("status"),
    }
    for phase, samples in phases.items():
        info[f"{phase}_ratio_median"] = round(statistics.median([s / p for s, p in zip(samples, peer, strict=True)]), 2)
    benchmark.extra_info.update(info)
    print(f"\nforced Session.compress of the real-session corpus, {n:,} messages: {info}")
    print(f"bars: time <= {TIME_BAR}x json.dumps, memory <= {MEMORY_BAR}x")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)

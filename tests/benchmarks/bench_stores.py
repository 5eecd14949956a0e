"""Benchmark: the Redis store against the local SQLite store (loopback redis-server).

Run: ``python -m pytest tests/benchmarks/bench_stores.py -q -p no:randomly --benchmark-only -s``

1. Prompt restore: ``Session.open(session_id=...)`` + ``system_prompt`` of a stored session
   (the replay path a gateway worker takes every turn), Redis vs SQLite, interleaved rounds;
   goal: median ratio <= 2.
2. Archiving one compaction: ``SessionArchive.record`` of a 20,000-message history whose oldest
   half left, written to the end (SQLite: ``record`` + draining its background writer; Redis:
   ``record``, which writes synchronously), Redis vs SQLite; goal: median ratio <= 2.
"""

from __future__ import annotations

import gc
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from bench_compressor import synthetic_history

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive.session_archive import SessionArchive
from hermes_plugins.redis_store import RedisSessionStore
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from redis_support import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_prompt_restore_redis_vs_sqlite(benchmark: Any, redis_url: str, tmp_path: Path) -> None:
    host = PluginHost.create()
    configs = {
        "sqlite": load_config(data={}),
        "redis": load_config(data={"session_store": {"backend": "redis", "url": redis_url, "key_prefix": "bench:"}}),
    }
    prompts = {}
    for kind, config in configs.items():
        first = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="restore", host=host, config=config)
        prompts[kind] = first.system_prompt

    def restore(kind: str) -> str:
        session = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="restore", host=host,
                               config=configs[kind])
        prompt = session.system_prompt
        assert session.built is not None and session.built.origin == "stored"
        return prompt

    times: dict[str, list[float]] = {"sqlite": [], "redis": []}
    for r in range(60):
        for kind in (("sqlite", "redis") if r % 2 == 0 else ("redis", "sqlite")):
            t0 = time.perf_counter()
            assert restore(kind) == prompts[kind]
            times[kind].append(time.perf_counter() - t0)
    ratios = [a / b for a, b in zip(times["redis"], times["sqlite"], strict=True)]
    info = {
        "sqlite_median_ms": round(statistics.median(times["sqlite"]) * 1000, 3),
        "redis_median_ms": round(statistics.median(times["redis"]) * 1000, 3),
        "ratio_median": round(statistics.median(ratios), 2),
        "prompt_chars": len(prompts["redis"]),
    }
    benchmark.extra_info.update(info)
    print(f"\nprompt restore: {info}")
    benchmark.pedantic(restore, args=("redis",), rounds=10, iterations=1)
    close_connections()
    assert statistics.median(ratios) <= 2.0


def test_archiving_a_compaction_redis_vs_sqlite(benchmark: Any, redis_url: str, tmp_path: Path) -> None:
    history = synthetic_history(20_000, scale=0.1)
    after = [history[0], *history[10_000:]]
    times: dict[str, list[float]] = {"sqlite": [], "redis": []}
    for r in range(5):
        for kind in (("sqlite", "redis") if r % 2 == 0 else ("redis", "sqlite")):
            store: Any = (
                SQLiteSessionStore(tmp_path / f"s{r}.db") if kind == "sqlite"
                else RedisSessionStore(redis_url, key_prefix=f"arch{r}:")
            )
            archive = SessionArchive(session_id=f"bench-{r}", store=store)
            gc.collect()
            t0 = time.perf_counter()
            archive.record(history, after)
            archive.flush()
            times[kind].append(time.perf_counter() - t0)
            assert len(archive) == 9_999
    ratios = [a / b for a, b in zip(times["redis"], times["sqlite"], strict=True)]
    info = {
        "archived": 9_999,
        "sqlite_median_ms": round(statistics.median(times["sqlite"]) * 1000, 1),
        "redis_median_ms": round(statistics.median(times["redis"]) * 1000, 1),
        "ratio_median": round(statistics.median(ratios), 2),
    }
    benchmark.extra_info.update(info)
    print(f"\narchiving one compaction: {info}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    close_connections()
    assert statistics.median(ratios) <= 2.0

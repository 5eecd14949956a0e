"""Token counting against raw tiktoken, measured side by side in the same run.

Targets (perf-baselines §1): exact counting <= 1.05x raw ``encode_ordinary`` on >= 1 KB texts;
the encoder loads lazily so ``import hermes_core`` adds < 50 ms over its dependencies.
Run: python -m pytest tests/benchmarks/bench_tokens.py --benchmark-only
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import pytest

from hermes_core.tokens import exact_tokenizer

TEXT = ("The system prompt is built once per session and replayed byte for byte. " * 40)[:2_048]


@pytest.fixture(scope="module")
def tok():
    t = exact_tokenizer()
    t.count("warm up")
    return t


def test_raw_encode_ordinary(benchmark, tok) -> None:
    enc = tok.encoding
    benchmark(lambda: len(enc.encode_ordinary(TEXT)))


def test_exact_tokenizer_count(benchmark, tok) -> None:
    benchmark(tok.count, TEXT)


def test_paired_ratio(tok) -> None:
    """Interleaved pairs; the median ratio is printed for the report."""
    enc = tok.encoding
    ratios = []
    for _ in range(30):
        t0 = time.perf_counter()
        for _ in range(200):
            len(enc.encode_ordinary(TEXT))
        t1 = time.perf_counter()
        for _ in range(200):
            tok.count(TEXT)
        t2 = time.perf_counter()
        ratios.append((t2 - t1) / (t1 - t0))
    print(f"\nexact count / raw encode_ordinary (2 KB): median {statistics.median(ratios):.3f}x")


def test_import_cost() -> None:
    def best(code: str) -> float:
        times = []
        for _ in range(7):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - start)
        return min(times)

    deps = best("import pluggy, attrs, structlog, yaml, click, xxhash")
    core = best("import hermes_core")
    print(f"\nimport: deps {deps*1e3:.1f} ms, hermes_core {core*1e3:.1f} ms, added {(core-deps)*1e3:.1f} ms")

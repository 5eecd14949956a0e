"""Benchmark: the compressor's free passes against the physical floor of one history pass.

Run: ``python -m pytest tests/benchmarks/bench_compressor.py -q -p no:randomly --benchmark-only -s``

The reference (timed interleaved in the same process, §4 of perf-baselines.md) is one pass
that estimates every message (chars/4) and hashes every tool result with xxh3-128: the least
any dedupe-plus-budget pass must do. The goal is a median paired ratio <= 2x, flat from 10,000
to 100,000 messages (linear). The synthetic histories follow perf-baselines §4: ~50% tool
results of 200 B-50 KB (log-uniform; JSON, Python, prose, some Chinese), ~10% exact repeats,
assistant messages with 1-3 JSON tool calls. ``HERMES_BENCH_SCALE`` / ``HERMES_BENCH_SCALE_100K``
(default 1.0: ~41 MB and ~430 MB of tool content) scale the tool-result sizes down when memory
is tight.

Besides the whole free passes, the run times the part that does what the reference does (the
same pass with nothing to demote: walking the list, grouping duplicates, writing the
back-references) so the extra cost of the one-line summaries shows.

Each sample keeps its return value until the clock has stopped: freeing the returned list (some
40,000 demoted copies at 100k messages) happens whenever the caller drops it, not in the call.
That teardown is timed on its own and reported as ``teardown_median_ms`` (the reference returns
an int, so it has none).
"""

from __future__ import annotations

import gc
import json
import math
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import pytest
import xxhash

from hermes_plugins._common import failures
from hermes_plugins.compressor.prune import prune_tool_results

_TOOLS = (
    "terminal", "read_file", "search_files", "web_search", "write_file", "patch",
    "execute_code", "browser_navigate", "delegate_task", "acme_lookup",
)


def _bases(rng: random.Random) -> dict[str, str]:
    words = [
        "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
        for _ in range(2_000)
    ]
    prose = " ".join(rng.choice(words) for _ in range(400_000))
    python = "\n".join(
        f"def {rng.choice(words)}_{i}({rng.choice(words)}, {rng.choice(words)}):\n"
        f"    return {rng.choice(words)} + {rng.randint(0, 999)}"
        for i in range(40_000)
    )
    records = [
        {"id": i, "name": rng.choice(words), "url": f"https://api.example.com/{rng.choice(words)}/{i}",
         "state": rng.choice(["open", "closed"]), "comments": rng.randint(0, 99)}
        for i in range(25_000)
    ]
    chinese = "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(300_000))
    return {
        "json": json.dumps(records, indent=2),
        "python": python,
        "prose": prose,
        "chinese": chinese,
    }


def synthetic_history(n: int, *, scale: float = 1.0, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    bases = _bases(rng)
    results: list[str] = []
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. " * 40}]
    call = 0
    while len(messages) < n:
        messages.append({"role": "user", "content": " ".join(rng.choice(bases["prose"].split(" ", 50)[:50]) for _ in range(rng.randint(5, 60)))})
        for _ in range(rng.randint(1, 2)):
            k = rng.randint(1, 3)
            calls = []
            for _ in range(k):
                call += 1
                name = rng.choice(_TOOLS)
                args = {"path": f"src/module_{rng.randint(0, 500)}.py", "command": f"pytest -q tests/test_{call}.py",
                        "query": "how to configure the thing", "offset": rng.randint(1, 400)}
                calls.append({"id": f"call_{call}", "type": "function",
                              "function": {"name": name, "arguments": json.dumps(args)}})
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            for c in calls:
                if results and rng.random() < 0.10:
                    original = rng.choice(results)
                    content = original[:1] + original[1:]  # an equal string, not the same object
                else:
                    size = int(math.exp(rng.uniform(math.log(200), math.log(50_000))) * scale)
                    size = max(200, size)
                    roll = rng.random()
                    kind = "json" if roll < 0.5 else "python" if roll < 0.8 else "prose"
                    if rng.random() < 0.05:
                        kind = "chinese"
                    base = bases[kind]
                    start = rng.randint(0, len(base) - size - 1)
                    content = base[start:start + size]
                    if c["function"]["name"] == "terminal":
                        content = json.dumps({"output": content[:-40], "exit_code": rng.choice([0, 0, 1])})
                    results.append(content)
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": content})
        messages.append({"role": "assistant", "content": "Done: " + " ".join(rng.choice(["ok", "fixed", "ran"]) for _ in range(20))})
    return messages[:n]


def reference_pass(messages: list[dict[str, Any]]) -> int:
    """The floor: chars/4 of every message plus an xxh3-128 of every tool result."""
    total = 0
    seen: dict[bytes, int] = {}
    digest = xxhash.xxh3_128_digest
    for i, message in enumerate(messages):
        content = message.get("content")
        if type(content) is str:
            total += (len(content) + 3) // 4
            if message.get("role") == "tool":
                seen.setdefault(digest(content.encode("utf-8", "surrogatepass")), i)
    return total + len(seen)


def free_passes(messages: list[dict[str, Any]]) -> Any:
    return prune_tool_results(messages, protect_tail_count=20, protect_tail_tokens=20_000)


def _cold_free_passes(messages: list[dict[str, Any]]) -> Any:
    clear = getattr(failures, "clear_cache", None)
    if callable(clear):
        clear()
    return free_passes(messages)


def paired(
    a: Callable[[], Any], b: Callable[[], Any], repeats: int, teardown: list[float] | None = None
) -> tuple[list[float], list[float]]:
    """Interleaved timings (a, b alternate order each repeat), gc collected before each sample.

    A sample's result is released after the clock stops; with ``teardown``, the time that
    release takes for ``a`` is appended there.
    """
    times_a: list[float] = []
    times_b: list[float] = []
    for r in range(repeats):
        order = ((a, times_a), (b, times_b)) if r % 2 == 0 else ((b, times_b), (a, times_a))
        for fn, bucket in order:
            gc.collect()
            t0 = time.perf_counter()
            result = fn()
            t1 = time.perf_counter()
            bucket.append(t1 - t0)
            del result
            if teardown is not None and fn is a:
                teardown.append(time.perf_counter() - t1)
    return times_a, times_b


@pytest.fixture(scope="module")
def histories() -> dict[int, list[dict[str, Any]]]:
    scale_100k = float(os.environ.get("HERMES_BENCH_SCALE_100K", "1.0"))
    scale_10k = float(os.environ.get("HERMES_BENCH_SCALE", "1.0"))
    return {
        10_000: synthetic_history(10_000, scale=scale_10k),
        100_000: synthetic_history(100_000, scale=scale_100k),
    }


@pytest.mark.parametrize("n", [10_000, 100_000])
def test_free_passes_vs_reference(benchmark: Any, histories: dict[int, list[dict[str, Any]]], n: int) -> None:
    messages = histories[n]
    snapshot_len = len(messages)
    tool = sum(1 for m in messages if m.get("role") == "tool")
    chars = sum(len(m["content"]) for m in messages if isinstance(m.get("content"), str))
    teardown: list[float] = []
    mine, ref = paired(lambda: free_passes(messages), lambda: reference_pass(messages), 9, teardown)
    ratios = [m / r for m, r in zip(mine, ref, strict=True)]
    # Everything protected: the same walk and dedupe, no demotion.
    index, ref2 = paired(
        lambda: prune_tool_results(messages, protect_tail_count=len(messages)), lambda: reference_pass(messages), 5
    )
    index_ratios = [m / r for m, r in zip(index, ref2, strict=True)]
    # First pass: failure verdicts and the one-liners built from them are remembered per
    # result string, so the samples above are warm after the first; these forget them before
    # each sample.
    cold, ref3 = paired(lambda: _cold_free_passes(messages), lambda: reference_pass(messages), 5)
    cold_ratios = [m / r for m, r in zip(cold, ref3, strict=True)]
    _, stats = free_passes(messages)
    info = {
        "messages": n,
        "tool_results": tool,
        "content_mb": round(chars / 1e6, 1),
        "free_passes_median_ms": round(statistics.median(mine) * 1000, 2),
        "reference_median_ms": round(statistics.median(ref) * 1000, 2),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratio_min": round(min(ratios), 2),
        "teardown_median_ms": round(statistics.median(teardown) * 1000, 2),
        "ratio_with_teardown_median": round(
            statistics.median([(m + t) / r for m, t, r in zip(mine, teardown, ref, strict=True)]), 2
        ),
        "index_and_dedupe_ratio_median": round(statistics.median(index_ratios), 2),
        "first_pass_ratio_median": round(statistics.median(cold_ratios), 2),
        "per_10k_ms": round(statistics.median(mine) * 1000 * 10_000 / n, 2),
        "deduplicated": stats.deduplicated,
        "demoted": stats.demoted,
        "arguments_shortened": stats.arguments_shortened,
    }
    benchmark.extra_info.update(info)
    print(f"\nfree passes, {n:,} messages: {info}")
    benchmark.pedantic(free_passes, args=(messages,), rounds=3, iterations=1)
    assert len(messages) == snapshot_len

"""Benchmark: ``hermes-ctx eval`` of a session against compressing it (issue 29: <= 3x).

Run: ``python -m pytest tests/benchmarks/bench_eval.py -q -p no:randomly -s``

The session is built from the shared real sessions (``../shared/real-sessions``, skipped when
absent; read in place, never copied): every conversation the readers find, one after the
other, repeated until the history holds ``HERMES_BENCH_EVAL_BYTES`` of JSON (default 1.5 MB,
the size of the session the issue timed at 11 minutes; the 8 MB case is ``-k 8mb``). Each
repetition is distinct content: every number in it is shifted and every longer text without a
number gets a mark of its own, so no cache keyed on equal strings answers for a copy.

Both sides go through the public entry points, interleaved in the same process (the plugin
host and the tokenizer are loaded once before timing, as in a host process): ``compress`` is
``Session.open(persist=False)`` + a forced ``Session.compress`` + ``close``, the path the eval
itself takes; ``eval`` is ``runner.evaluate`` (compress, probes, recall, counted fit, invented
failures). The ratio is the median of eval/compress over the rounds, at a 32k and a 64k window
(wall clock; ``cpu_ratio_median`` is the same from the process's CPU time, steadier on a
shared machine).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.tokens import exact_tokenizer

from locations import REAL_SESSIONS

BAR = 3.0
_NUMBER = re.compile(r"\d+")
_TEXT_KEYS = frozenset({"content", "text", "arguments", "output"})


def _vary(value: Any, r: int, key: str = "") -> Any:
    if isinstance(value, str):
        if not r:
            return value
        shifted = _NUMBER.sub(lambda m: str(int(m.group(0)) + r * 1009), value)
        if shifted is value or shifted == value:
            if key in _TEXT_KEYS and len(value) >= 20:
                return f"{value} ·r{r}"
        return shifted
    if isinstance(value, list):
        return [_vary(v, r, key) for v in value]
    if isinstance(value, dict):
        return {k: _vary(v, r, k) for k, v in value.items()}
    return value


def eval_corpus(target_bytes: int) -> list[dict[str, Any]]:
    """The real sessions' conversations, repeated with distinct content up to ``target_bytes``."""
    from hermes_plugins.evaluation.command import read_conversations

    if not REAL_SESSIONS.is_dir():
        pytest.skip(f"no real sessions at {REAL_SESSIONS}")
    conversations = [messages for path in sorted(REAL_SESSIONS.iterdir())
                     if path.is_file() and not path.name.startswith(("README", "."))
                     for _label, messages, _model in read_conversations(path)]
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    size, r = 0, 0
    while size < target_bytes:
        for messages in conversations:
            part = _vary([m for m in messages if m.get("role") != "system"], r)
            out.extend(part)
            size += len(json.dumps(part))
        r += 1
    return out


def _compress(config: Any, home: Path, messages: list[dict[str, Any]], window: int) -> None:
    session = Session.open(config=config, persist=False, context_length=window, model="gpt-4o", home=home)
    try:
        session.compress(list(messages), force=True)
    finally:
        session.close()


@pytest.mark.parametrize("target", [1_500_000, 8_000_000], ids=["1.5mb", "8mb"])
@pytest.mark.parametrize("window", [32_000, 64_000], ids=["32k", "64k"])
def test_eval_vs_compress(tmp_path: Path, target: int, window: int) -> None:
    from hermes_plugins.evaluation.runner import evaluate

    messages = eval_corpus(int(os.environ.get("HERMES_BENCH_EVAL_BYTES", target)))
    config = load_config(home=tmp_path, env={})
    exact_tokenizer().count("load the encoding once, as a host process has")
    _compress(config, tmp_path, messages[:50], window)  # the shared plugin host is built once
    rounds = int(os.environ.get("HERMES_BENCH_ROUNDS", "5"))
    compress_s: list[float] = []
    eval_s: list[float] = []
    compress_cpu: list[float] = []
    eval_cpu: list[float] = []
    run: dict[str, Any] = {}
    for r in range(rounds):
        for step in (("compress", "eval") if r % 2 == 0 else ("eval", "compress")):
            started, cpu = time.perf_counter(), time.process_time()
            if step == "compress":
                _compress(config, tmp_path, messages, window)
                compress_s.append(time.perf_counter() - started)
                compress_cpu.append(time.process_time() - cpu)
            else:
                run = evaluate(messages, engine=config.context.engine, context_length=window, config=config,
                               host=None, model="gpt-4o", home=tmp_path)
                eval_s.append(time.perf_counter() - started)
                eval_cpu.append(time.process_time() - cpu)
    ratios = [e / c for e, c in zip(eval_s, compress_s, strict=True)]
    info = {
        "messages": len(messages),
        "json_bytes": len(json.dumps(messages)),
        "window": window,
        "compress_median_ms": round(statistics.median(compress_s) * 1000, 1),
        "eval_median_ms": round(statistics.median(eval_s) * 1000, 1),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratio_max": round(max(ratios), 2),
        # CPU time of the process (all threads): the same ratio less the other processes' noise.
        "cpu_ratio_median": round(statistics.median(
            [e / c for e, c in zip(eval_cpu, compress_cpu, strict=True)]), 2),
        "probes": sum(c["total"] for c in run["probes"].values()),
        "fits": run["fits"],
    }
    print(f"\neval vs compress: {info}")
    assert info["ratio_median"] <= BAR, info

"""Reading a real Claude Code session against the floor of parsing it.

Run: ``python -m pytest tests/benchmarks/bench_transcripts.py -q -p no:randomly --benchmark-only -s``

The floor is what any reader of a JSON Lines file must do: read the file and ``json.loads``
every line. The public entry point ``read_transcript(path)`` (detection, merging records of a
response, placing results, markers, the report, the pairing check) is timed against it in
interleaved rounds; the goal (issue 15) is a median ratio <= 2x on the 3 MB file.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from pathlib import Path

import pytest

from hermes_core.host import PluginHost
from hermes_core.transcripts import read_transcript

ROUNDS = 15


def _floor(path: Path) -> int:
    with path.open("rb") as fh:
        return len([json.loads(line) for line in fh if line.strip()])


def paired_reads(path: Path, host: PluginHost, rounds: int = ROUNDS) -> tuple[list[float], list[float]]:
    """``(floors, reads)``: per round, ``json.loads`` of each line, then ``read_transcript``,
    timed back to back (after one warm read: formats collected, modules imported)."""
    read_transcript(path, host=host)
    floors, reads = [], []
    for _ in range(rounds):
        gc.collect()
        t0 = time.perf_counter()
        _floor(path)
        t1 = time.perf_counter()
        transcript = read_transcript(path, host=host)
        t2 = time.perf_counter()
        floors.append(t1 - t0)
        reads.append(t2 - t1)
        del transcript
    return floors, reads


def test_claude_code_read_vs_json_loads(real_sessions_dir: Path, benchmark: pytest.FixtureRequest) -> None:
    path = real_sessions_dir / "claude-code_8463c716.jsonl"
    host = PluginHost.create()
    floors, reads = paired_reads(path, host)
    ratios = [r / f for r, f in zip(reads, floors)]
    ratio = statistics.median(ratios)
    print(f"\nclaude-code {path.stat().st_size / 1e6:.1f} MB: json.loads per line median "
          f"{statistics.median(floors) * 1e3:.1f} ms, read_transcript median "
          f"{statistics.median(reads) * 1e3:.1f} ms, paired ratio median {ratio:.2f}x")
    benchmark.pedantic(read_transcript, args=(path,), kwargs={"host": host}, rounds=3, iterations=1)
    assert ratio <= 2.0

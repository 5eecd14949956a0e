"""The streaming readers of issue 30 on 100,000-record files, against the floor of parsing them.

Run: ``python -m pytest tests/benchmarks/bench_readers.py -q -p no:randomly --benchmark-only -s``

For each streaming format (Gemini CLI stream-json and session recordings, Qwen Code, goose,
Codex CLI rollouts, OpenHands event lines) a 100,000-record session made by
``tests/support/transcript_streams.py`` is read through the public entry point ``read_transcript(path)``
(detection, conversion, the report, the pairing repair) and timed against what any reader must
do: read the file and ``json.loads`` every line, in interleaved rounds. Goal (issue 30): median
ratio <= 2x. Memory: the peak (tracemalloc) of reading a 100,000-record file of records that
never become messages (dropped, or merged into one): at most 512 kB plus 3x the messages it
yields, whatever the file's size.
"""

from __future__ import annotations

import gc
import json
import statistics
import tracemalloc
from pathlib import Path

import pytest
from bench_transcripts import paired_reads

from hermes_core.host import PluginHost
from hermes_core.transcripts import read_transcript

from transcript_streams import GENERATORS, lines, quiet

ROUNDS = 5
RECORDS = 100_000


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_read_vs_json_loads_and_memory(name: str, tmp_path: Path, benchmark: pytest.FixtureRequest) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines(name, RECORDS)) + "\n")
    host = PluginHost.create()
    floors, reads = paired_reads(path, host, ROUNDS)
    ratio = statistics.median(r / f for r, f in zip(reads, floors))
    quiet_path = tmp_path / "quiet.jsonl"
    quiet_path.write_text("\n".join(quiet(name, RECORDS)) + "\n")
    gc.collect()
    tracemalloc.start()
    try:
        quiet_read = read_transcript(quiet_path, host=host)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    yielded = len(json.dumps(quiet_read.chat_messages()))
    size, quiet_size = path.stat().st_size, quiet_path.stat().st_size
    print(f"\n{name}: {size / 1e6:.1f} MB, json.loads per line median {statistics.median(floors) * 1e3:.0f} ms, "
          f"read_transcript median {statistics.median(reads) * 1e3:.0f} ms, paired ratio median {ratio:.2f}x; "
          f"quiet {quiet_size / 1e6:.1f} MB read at a peak of {peak / 1e6:.2f} MB for {yielded / 1e6:.2f} MB of messages")
    benchmark.pedantic(read_transcript, args=(path,), kwargs={"host": host}, rounds=1, iterations=1)
    assert ratio <= 2.0
    # Bounded by the messages yielded (a reply of 100,000 merged chunks is one large message),
    # plus the constant of any read (the 64 kB head, detection, the report).
    assert peak < 512_000 + 3 * yielded

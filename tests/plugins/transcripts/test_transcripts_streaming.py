"""The streaming readers of issue 30 read JSON Lines line by line: a large file of records that
never become messages takes little memory, a realistic one reads whole and accounted, and the
progress callback (the CLI's bar on a terminal) follows the bytes read."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from hermes_core.pairing import pairing_problems
from hermes_core.transcript_format import Transcript
from hermes_core.transcripts import read_transcript

from transcript_streams import GENERATORS, lines, quiet

FORMAT_OF = {name: name.split(" ")[0] for name in GENERATORS}


def _write(path: Path, records: object) -> Path:
    path.write_text("\n".join(records) + "\n")  # type: ignore[call-overload]
    return path


def _peak(path: Path) -> tuple[int, Transcript]:
    tracemalloc.start()
    try:
        transcript = read_transcript(path)
        return tracemalloc.get_traced_memory()[1], transcript
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_memory_follows_the_messages_not_the_records(name: str, tmp_path: Path) -> None:
    small = _write(tmp_path / "small.jsonl", quiet(name, 1_000))  # more than the 64 kB head
    read_transcript(small)  # warm: formats collected, modules imported
    base, _ = _peak(small)  # what any read costs: the head, detection, the report
    path = _write(tmp_path / "quiet.jsonl", quiet(name, 4_000))
    size = path.stat().st_size - small.stat().st_size
    peak, transcript = _peak(path)
    assert transcript.format == FORMAT_OF[name]
    report = transcript.conversion
    assert report is not None and report.records == 4_000 and report.unaccounted == 0
    # A parse of the whole file would hold several times its size; streaming, for 3,000 more
    # records that yield nothing, holds a small fraction of their bytes more.
    assert peak - base < size / 5, f"{name}: peak {peak:,} (base {base:,}) for {size:,} more bytes"


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_a_realistic_file_reads_whole_with_progress(name: str, tmp_path: Path) -> None:
    path = _write(tmp_path / "session.jsonl", lines(name, 1_500))
    seen: list[tuple[int, int]] = []
    transcript = read_transcript(path, progress=lambda done, total: seen.append((done, total)))
    assert transcript.format == FORMAT_OF[name]
    assert pairing_problems(transcript.messages) == []
    report = transcript.conversion
    assert report is not None and report.records == 1_500 and report.unaccounted == 0
    assert sum(1 for m in transcript.messages if m.get("tool_calls")) >= 150
    assert len(seen) >= 3 and seen[-1][0] == seen[-1][1] == path.stat().st_size
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)

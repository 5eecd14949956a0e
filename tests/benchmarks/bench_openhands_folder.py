"""An OpenHands session folder of 20,000 event files (one event a numbered JSON file), read through
``read_transcript(folder)`` against the floor any reader pays: list the folder, read every file,
``json.loads`` it - in interleaved rounds. Goal (issue 30): median ratio <= 2x.

Run: ``python -m pytest tests/benchmarks/bench_openhands_folder.py -q -p no:randomly --benchmark-only -s``
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

ROUNDS = 5
EVENTS = 20_000


def _event(n: int) -> dict[str, object]:
    call = f"toolu_{n // 2}"
    meta = {"function_name": "execute_bash", "tool_call_id": call, "model_response": {"id": f"resp-{n // 2}"},
            "total_calls_in_response": 1}
    if n % 2 == 0:
        meta["model_response"] = {"id": f"resp-{n // 2}", "choices": [{"message": {
            "role": "assistant", "content": f"Step {n // 2}: run the tests again.",
            "tool_calls": [{"id": call, "type": "function",
                            "function": {"name": "execute_bash", "arguments": json.dumps({"command": "pytest -x"})}}]}}]}
        return {"id": n, "timestamp": "2026-01-05T10:00:00", "source": "agent", "message": "Running command: pytest -x",
                "action": "run", "args": {"command": "pytest -x", "thought": ""}, "tool_call_metadata": meta}
    output = "\n".join(f"tests/test_mod{i}.py::test_case PASSED" for i in range(20))
    return {"id": n, "timestamp": "2026-01-05T10:00:01", "source": "agent", "message": "Command executed",
            "cause": n - 1, "observation": "run", "content": output,
            "extras": {"command": "pytest -x", "metadata": {"exit_code": 0}}, "tool_call_metadata": meta}


def _floor(folder: Path) -> int:
    return len([json.loads(p.read_bytes()) for p in sorted(folder.iterdir())])


def test_folder_read_vs_json_loads(tmp_path: Path, benchmark: pytest.FixtureRequest) -> None:
    folder = tmp_path / "sessions" / "abc" / "events"
    folder.mkdir(parents=True)
    (folder.parent / "metadata.json").write_text(json.dumps({"title": "bench"}), encoding="utf-8")
    (folder.parent / "events" / "0.json").write_text(json.dumps({
        "id": 0, "source": "user", "action": "message", "args": {"content": "Fix the tests"}}), encoding="utf-8")
    for n in range(1, EVENTS):
        (folder / f"{n}.json").write_text(json.dumps(_event(n + 1)), encoding="utf-8")
    host = PluginHost.create()
    read_transcript(folder.parent, host=host)  # warm: formats collected, modules imported
    floors, reads = [], []
    for _ in range(ROUNDS):
        gc.collect()
        t0 = time.perf_counter()
        _floor(folder)
        t1 = time.perf_counter()
        transcript = read_transcript(folder.parent, host=host)
        t2 = time.perf_counter()
        floors.append(t1 - t0)
        reads.append(t2 - t1)
        assert transcript.conversion is not None and transcript.conversion.unaccounted == 0
        del transcript
    ratio = statistics.median(r / f for r, f in zip(reads, floors))
    print(f"\nopenhands folder: {EVENTS:,} event files, listing + read + json.loads median "
          f"{statistics.median(floors) * 1e3:.0f} ms, read_transcript median {statistics.median(reads) * 1e3:.0f} ms, "
          f"paired ratio median {ratio:.2f}x")
    benchmark.pedantic(read_transcript, args=(folder.parent,), kwargs={"host": host}, rounds=1, iterations=1)
    assert ratio <= 2.0

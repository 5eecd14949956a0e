"""Benchmark: the shared detectors of issue 29 against one ``json.dumps`` of the same history.

Run: ``python -m pytest tests/benchmarks/bench_truth_detectors.py -q -s``

The summary runs the new detectors over every condensed message: ``text_edits`` over assistant
replies, ``shell_writes`` over shell commands, ``requests_of`` over every message (``failure_of``,
older, is timed by the compressor's benchmarks). They must stay linear and cheap: the goal is a
median paired ratio (the three together / one ``json.dumps`` of the history, timed interleaved in
the same process) <= 0.8 at 10,000 messages, and the ratio at 50,000 within 1.5x of it (linear).
The corpus is heavier in edits than real sessions (a third of the replies carry one, 60% of the
commands write a file), so real histories cost less. The history is hand-built in the shapes the detectors read (Aider edit
blocks, Cline XML tools and pasted results, Codex patches, prose with code fences, shell
commands with heredocs and redirections, tool outputs of 1-6 kB), distinct per message.
"""

from __future__ import annotations

import gc
import json
import random
import statistics
import time
from typing import Any

import pytest

from hermes_core.messages import content_text
from hermes_core.transcripts import MISSING_RESULT_TEXT
from hermes_plugins._common import failures
from hermes_plugins._common.injected import requests_of
from hermes_plugins._common.textedits import shell_writes, text_edits

_REPLIES = (
    "I'll update the handler.\n\nsrc/h{i}.py\n```python\n<<<<<<< SEARCH\ndef h{i}(x):\n=======\n"
    "def h{i}(x, strict=False):\n>>>>>>> REPLACE\n```\n",
    "Reading it first.\n<read_file>\n<path>src/m{i}.ts</path>\n</read_file>",
    "<write_to_file>\n<path>src/v{i}.py</path>\n<content>\n{body}</content>\n</write_to_file>",
    "Here is an example:\n```python\nprint({i})\n```\nThat should do it; the value is {i}.",
    "*** Begin Patch\n*** Update File: pkg/c{i}.py\n@@\n-a\n+b\n*** End Patch",
    "Plain prose about step {i}: the parser handles the input and the tests pass.",
)
_COMMANDS = (
    "cat > conf/c{i}.ini <<'EOF'\n[main]\nvalue = {i} > 0\nEOF",
    "pytest -q tests/test_{i}.py 2>&1 | tail -20",
    "sed -i 's/old_{i}/new_{i}/' src/s{i}.py",
    "grep -rn 'used_{i}' src | head",
    "python run_{i}.py > out/run_{i}.log 2>&1",
)


def _history(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    body = "".join(f"    line {n}: value = compute(a_{n}, b_{n})\n" for n in range(40))
    messages: list[dict[str, Any]] = []
    i = 0
    while len(messages) < count:
        i += 1
        kind = rng.random()
        if kind < 0.1:
            messages.append({"role": "user", "content": f"Please change step {i} so it validates input {i}"})
        elif kind < 0.2:
            messages.append({"role": "user", "content": f"[execute_command for 'make t{i}'] Result:\n{body}"
                             "\n<environment_details>\nx\n</environment_details>"})
        elif kind < 0.55:
            messages.append({"role": "assistant", "content": rng.choice(_REPLIES).format(i=i, body=body)})
        else:
            command = rng.choice(_COMMANDS).format(i=i)
            messages.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]})
            output = MISSING_RESULT_TEXT if rng.random() < 0.05 else (
                body * rng.randint(1, 4) + rng.choice(["exit code: 0", "error: failed\nexit code: 1", "ok"]) + f" {i}")
            messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": output})
    return messages


def _detect(messages: list[dict[str, Any]]) -> int:
    found = 0
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            text = content_text(message.get("content"))
            if text:
                found += len(text_edits(text))
            for call in message.get("tool_calls") or ():
                command = json.loads(call["function"]["arguments"]).get("command")
                if command:
                    found += len(shell_writes(command))
    return found + len(requests_of(messages))


def _paired(messages: list[dict[str, Any]], rounds: int) -> tuple[float, float, float]:
    ratios, ours, floors = [], [], []
    for _ in range(rounds):
        failures.clear_cache()
        gc.collect()
        started = time.perf_counter()
        _detect(messages)
        mine = time.perf_counter() - started
        started = time.perf_counter()
        json.dumps(messages)
        floor = time.perf_counter() - started
        ratios.append(mine / floor)
        ours.append(mine)
        floors.append(floor)
    return statistics.median(ratios), statistics.median(ours), statistics.median(floors)


@pytest.mark.benchmark
def test_detectors_cost_a_fraction_of_a_dumps_and_stay_linear() -> None:
    small = _history(10_000)
    large = _history(50_000, seed=8)
    ratio_small, ours_small, floor_small = _paired(small, 5)
    ratio_large, ours_large, floor_large = _paired(large, 3)
    print(f"\n10k: detectors {ours_small * 1000:.0f} ms, json.dumps {floor_small * 1000:.0f} ms, ratio {ratio_small:.2f}")
    print(f"50k: detectors {ours_large * 1000:.0f} ms, json.dumps {floor_large * 1000:.0f} ms, ratio {ratio_large:.2f}")
    assert ratio_small <= 0.8
    assert ratio_large <= 1.5 * ratio_small

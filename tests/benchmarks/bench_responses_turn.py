"""One Responses-API turn at 10k messages through the public entry points, against one
``json.dumps`` of the request it builds (timed in the same run).

A turn: the host appends a user message, then ``Session.before_request`` and
``Session.request(..., api="responses")``. The history is built from Responses items the way
a host keeps it: each response's ``output`` appended as it came (reasoning with encrypted
content, an assistant message, 1-3 parallel function calls) and a ``function_call_output``
per call, results of 200 B - 8 KB (log-uniform). Target (the bar issue 16 set for plain
histories): turn <= 0.05 x json.dumps(request).

Run: python -m pytest tests/benchmarks/bench_responses_turn.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from hermes_core import Session

MESSAGES = 10_000
ROUNDS = 15


def items(n_messages: int, seed: int = 4) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    messages = call = 0
    while messages < n_messages:
        out.append({"role": "user", "content": f"please look at module {messages} and fix it " * 3})
        messages += 1
        for _ in range(rng.randint(1, 3)):
            out.append({"type": "reasoning", "id": f"rs_{call}", "summary": [],
                        "encrypted_content": "gAAAA" + "x" * rng.randint(200, 2000)})
            ids = []
            for _ in range(rng.randint(1, 3)):
                call += 1
                ids.append(f"call_{call}")
                out.append({"type": "function_call", "id": f"fc_{call}", "call_id": f"call_{call}",
                            "name": "read_file", "status": "completed",
                            "arguments": json.dumps({"path": f"src/m{call}.py", "limit": 200})})
            messages += 1
            for ident in ids:
                size = int(200 * (40 ** rng.random()))
                out.append({"type": "function_call_output", "call_id": ident,
                            "output": "x = 1\n" * (size // 6 + 1)})
                messages += 1
        out.append({"type": "message", "id": f"msg_{call}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Done with that part.", "annotations": []}]})
        messages += 1
    return out


def test_responses_turn_10k(benchmark: Any, tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path / "home", model="gpt-5", provider="openai",
                           context_length=10**12, persist=False, env={})
    messages = session.before_request(items(MESSAGES))
    request = session.request(messages, api="responses")  # the first request reads it all
    count = 0
    turns: list[float] = []
    dumps: list[float] = []
    for _ in range(ROUNDS):
        count += 1
        messages = [*messages, {"role": "user", "content": f"and now step {count}"}]
        start = time.perf_counter()
        messages = session.before_request(messages)
        request = session.request(messages, api="responses")
        turns.append(time.perf_counter() - start)
        start = time.perf_counter()
        json.dumps(request)
        dumps.append(time.perf_counter() - start)
    turn, dump = statistics.median(turns), statistics.median(dumps)
    print(f"\n  messages: {len(messages):,}  input items: {len(request['input']):,}")
    print(f"  turn: {turn * 1e3:.3f} ms  json.dumps(request): {dump * 1e3:.3f} ms  "
          f"ratio {turn / dump:.4f}  [target <= 0.05]")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert turn / dump <= 0.05

"""The request payload on a 10k-message history, against copy floors timed in the same run.

* ``anthropic_layout`` (system_and_3 over the canonical payload) against the floor of
  perf-baselines §4, "list copy + deepcopy of the last 4 messages" (goal: <= 2x), and against
  ``copy.deepcopy`` of the whole history (what the reference's layout pays);
* ``assemble_payload`` (strip every string content, canonical tool arguments, metadata keys off,
  copy-on-write) against the rough estimate pass over the same history (the compressor's
  cheapest per-message pass, ``estimate_messages_tokens``), warm: argument strings seen before.
  Twice: on the raw history, where every tool result ends in a newline and every call has spaced
  JSON (so each is copied, every request), and on a history kept in canonical form.

The history is synthetic OpenAI chat format like perf-baselines §4: user turns, assistants with
1-3 tool calls, tool results of 200 B - 8 KB (log-uniform), about half of all messages tools.
Run: python -m pytest tests/benchmarks/bench_payload.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import copy
import json
import random
import timeit
from collections.abc import Callable
from typing import Any

import pytest

from hermes_core.payload import assemble_payload
from hermes_core.tokens import estimate_messages_tokens
from hermes_plugins.caching import anthropic_layout

MESSAGES = 10_000
RATIOS: dict[str, float] = {}


def history(n: int = MESSAGES, seed: int = 4) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    call = 0
    while len(out) < n:
        out.append({"role": "user", "content": f"please look at module {len(out)} and fix it " * 3})
        for _ in range(rng.randint(1, 3)):
            ids = []
            calls = []
            for _ in range(rng.randint(1, 3)):
                call += 1
                ids.append(f"call_{call}")
                calls.append({"id": f"call_{call}", "type": "function", "function": {
                    "name": "read_file", "arguments": json.dumps({"path": f"src/m{call}.py", "limit": 200})}})
            out.append({"role": "assistant", "content": "", "tool_calls": calls})
            for ident in ids:
                size = int(200 * (40 ** rng.random()))
                out.append({"role": "tool", "tool_call_id": ident, "content": ("x = 1\n" * (size // 6 + 1))})
        out.append({"role": "assistant", "content": "Done with that part."})
    return out[:n]


@pytest.fixture(scope="module")
def messages() -> list[dict[str, Any]]:
    return history()


@pytest.fixture(scope="module")
def canonical(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return assemble_payload("system prompt " * 500, messages)


def floor_copy(messages: list[dict[str, Any]]) -> Callable[[], object]:
    def run() -> object:
        out = list(messages)
        for index in range(len(out) - 4, len(out)):
            out[index] = copy.deepcopy(out[index])
        return out

    return run


def _ratio(subject: Callable[[], object], reference: Callable[[], object], rounds: int,
           inner: int) -> tuple[float, float, float]:
    """(subject / reference, subject s, reference s): best of interleaved rounds, per call.

    The best round, not the median: the machine is shared, and the floor is what each path
    costs when nothing else interferes.
    """
    subject_times, reference_times = [], []
    for _ in range(rounds):
        reference_times.append(min(timeit.repeat(reference, number=inner, repeat=3)) / inner)
        subject_times.append(min(timeit.repeat(subject, number=inner, repeat=3)) / inner)
    best_subject, best_reference = min(subject_times), min(reference_times)
    return best_subject / best_reference, best_subject, best_reference


def test_layout(benchmark: Any, canonical: dict[str, Any]) -> None:
    benchmark(lambda: anthropic_layout(canonical))


def test_floor_list_copy_deepcopy_last4(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    benchmark(floor_copy(messages))


def test_deepcopy_history(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    benchmark.pedantic(lambda: copy.deepcopy(messages), rounds=5, iterations=1)


def test_assemble(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    benchmark(lambda: assemble_payload("system prompt", messages))


def test_estimate_pass(benchmark: Any, messages: list[dict[str, Any]]) -> None:
    benchmark(lambda: estimate_messages_tokens(messages))


def test_ratios(messages: list[dict[str, Any]], canonical: dict[str, Any]) -> None:
    layout = lambda: anthropic_layout(canonical)  # noqa: E731
    rows = {
        "layout / (list copy + deepcopy last 4)": _ratio(layout, floor_copy(messages), 7, 50),
        "layout / deepcopy of the history": _ratio(layout, lambda: copy.deepcopy(messages), 3, 1),
    }
    assemble_payload("system prompt", messages)  # warm the argument cache, as a session would be
    estimate = lambda: estimate_messages_tokens(messages)  # noqa: E731
    rows["assemble_payload / estimate pass (every result and call rewritten)"] = _ratio(
        lambda: assemble_payload("system prompt", messages), estimate, 5, 3
    )
    clean = list(canonical["messages"])  # a history kept in canonical form: nothing to copy
    rows["assemble_payload / estimate pass (canonical history)"] = _ratio(
        lambda: assemble_payload("system prompt", clean), estimate, 5, 3
    )
    print()
    for name, (ratio, subject, reference) in rows.items():
        RATIOS[name] = ratio
        print(f"  {name}: {ratio:.3f}x  ({subject * 1e6:,.1f} us vs {reference * 1e6:,.1f} us)")
    assert RATIOS["layout / (list copy + deepcopy last 4)"] <= 2.0

"""One turn through the public entry points, at 10k and 100k messages, against list copies.

A turn is what a host does per request with compression on but not firing, one new message per
turn: ``Session.before_request`` + ``Session.request`` for Anthropic and for OpenAI (each turned
into the SDK's keyword arguments) + ``Session.after_response``. Timed in interleaved rounds (10k
turn, 100k turn, list copies, ...) with the garbage collector on, as a host runs; figures are
medians of the rounds.

Targets (issue 16): turn(100k) - turn(10k) <= 3 x (list(messages) at 100k - at 10k), and at 10k
the turn <= 0.05 x one ``json.dumps`` of the request the SDK would send. Also reported: the
content check the message cache makes of every message when ``verify_window=None`` (why it
checks only the newest 64 by default); the same ratio in this thread's CPU time (what other
processes' load adds to the wall time left out); and the floor of any turn of this design, in
the same units: the two ``messages`` lists the SDKs get, built and freed, and six identity
scans of the history (one per Session call, and one per request after the layout hook).

Run: python -m pytest tests/benchmarks/bench_turn.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_payload import history

from hermes_core import Session
from hermes_core.history import snapshot
from hermes_core.wire import to_anthropic, to_openai

ROUNDS = 9
RESULTS: dict[str, float] = {}


def sdk_kwargs(session: Session, messages: list[dict[str, Any]], provider: str) -> Any:
    out = session.request(messages, provider=provider)
    if "provider" in out:  # the canonical payload: turn it into the SDK's arguments
        return to_anthropic(out) if provider == "anthropic" else to_openai(out)
    return out


class Conversation:
    """A session and its growing history; ``turn()`` appends one message and runs a turn."""

    def __init__(self, home: Path, n: int) -> None:
        self.session = Session.open(cwd=str(home), home=str(home), model="claude-sonnet-4",
                                    provider="anthropic", context_length=10**12, persist=False)
        self.messages = history(n)
        self.count = 0
        self.turn()  # the first request processes the whole history once

    def turn(self) -> None:
        self.count += 1
        self.messages.append({"role": "user", "content": f"and now step {self.count}"})
        session = self.session
        messages = session.before_request(self.messages)
        sdk_kwargs(session, messages, "anthropic")
        sdk_kwargs(session, messages, "openai")
        self.messages = session.after_response({"prompt_tokens": 1000}, messages)


def timed(fn: Callable[[], object], inner: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


@pytest.fixture(scope="module")
def conversations(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Conversation]:
    home = tmp_path_factory.mktemp("turn-home")
    return {n: Conversation(home, n) for n in (10_000, 100_000)}


def test_turn_10k(benchmark: Any, conversations: dict[int, Conversation]) -> None:
    benchmark.pedantic(conversations[10_000].turn, rounds=20, iterations=1)


def test_turn_100k(benchmark: Any, conversations: dict[int, Conversation]) -> None:
    benchmark.pedantic(conversations[100_000].turn, rounds=10, iterations=1)


def test_ratios(benchmark: Any, conversations: dict[int, Conversation]) -> None:
    small, large = conversations[10_000], conversations[100_000]
    dumps_request = sdk_kwargs(small.session, small.messages, "anthropic")
    samples: dict[str, list[float]] = {k: [] for k in (
        "turn 10k", "turn 100k", "list 10k", "list 100k", "json.dumps 10k", "full check 100k",
    )}
    snaps = [snapshot(m) for m in large.messages]

    def full_check() -> bool:
        messages = large.messages
        return all(snapshot(messages[i]) == snaps[i] for i in range(len(snaps)))

    cpu: dict[str, list[float]] = {k: [] for k in ("turn 10k", "turn 100k", "list 10k", "list 100k")}
    for _ in range(ROUNDS):
        sample(samples, cpu, "turn 10k", small.turn)
        sample(samples, cpu, "turn 100k", large.turn)
        sample(samples, cpu, "list 10k", lambda: list(small.messages))
        sample(samples, cpu, "list 100k", lambda: list(large.messages))
        samples["full check 100k"].append(timed(full_check))
    for _ in range(3):
        samples["json.dumps 10k"].append(timed(lambda: json.dumps(dumps_request)))
    med = {k: statistics.median(v) for k, v in samples.items()}
    growth = med["turn 100k"] - med["turn 10k"]
    copies = med["list 100k"] - med["list 10k"]
    RESULTS.update(
        growth_over_list_copies=growth / copies,
        turn10k_over_dumps=med["turn 10k"] / med["json.dumps 10k"],
    )
    print()
    for key, value in med.items():
        print(f"  {key}: {value * 1e3:,.3f} ms  [{min(samples[key]) * 1e3:,.3f} .. "
              f"{max(samples[key]) * 1e3:,.3f}]")
    print(f"  turn(100k) - turn(10k) = {growth * 1e3:.3f} ms = "
          f"{RESULTS['growth_over_list_copies']:.2f} x (list copy 100k - 10k)  [target <= 3]")
    print(f"  turn(10k) / json.dumps(request 10k) = {RESULTS['turn10k_over_dumps']:.4f}  [target <= 0.05]")
    cpu_med = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"  in CPU time: turn {cpu_med['turn 10k'] * 1e3:.3f} / {cpu_med['turn 100k'] * 1e3:.3f} ms, "
          f"list {cpu_med['list 10k'] * 1e3:.3f} / {cpu_med['list 100k'] * 1e3:.3f} ms: "
          f"{_growth(cpu_med, 'turn') / _growth(cpu_med, 'list'):.2f} x")
    floor, floor_cpu = floor_ratio(conversations)
    print(f"  the floor (the SDKs' two lists + six identity scans) = {floor:.2f} x (list copy 100k - 10k), "
          f"in CPU time {floor_cpu:.2f} x")
    print(f"  gc: {gc.get_stats()[2]}")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert RESULTS["growth_over_list_copies"] <= 3.0
    assert RESULTS["turn10k_over_dumps"] <= 0.05


def sample(wall: dict[str, list[float]], cpu: dict[str, list[float]], key: str, fn: Callable[[], object]) -> None:
    """One call timed in wall time and in this thread's CPU time."""
    own = time.thread_time()
    wall[key].append(timed(fn))
    cpu[key].append(time.thread_time() - own)


def _growth(med: dict[str, float], what: str) -> float:
    return med[f"{what} 100k"] - med[f"{what} 10k"]


def floor_ratio(conversations: dict[int, Conversation]) -> tuple[float, float]:
    """What no turn of this design avoids, as (100k - 10k) over list copies timed in the same
    rounds: the ``messages`` lists the OpenAI and Anthropic SDKs get (new lists the host keeps,
    built here from the very objects a turn's lists hold, then freed) and six pointer
    comparisons of the whole history (before_request, two requests and after_response prove
    the host's list unchanged; each request proves the layout hook changed only what it said).
    In wall time and in this thread's CPU time."""
    floors: dict[int, Callable[[], object]] = {}
    for n, conversation in conversations.items():
        session, messages = conversation.session, conversation.messages
        sent = (sdk_kwargs(session, messages, "openai")["messages"],
                sdk_kwargs(session, messages, "anthropic")["messages"])
        twin = list(messages)

        def floor(sent: Any = sent, messages: list[Any] = messages, twin: list[Any] = twin) -> None:
            for listed in sent:
                list(listed)
            for _ in range(6):
                assert messages == twin

        floors[n] = floor
    wall: dict[str, list[float]] = {k: [] for k in ("floor 10k", "floor 100k", "list 10k", "list 100k")}
    cpu: dict[str, list[float]] = {k: [] for k in wall}
    for _ in range(ROUNDS):
        for n in (10_000, 100_000):
            sample(wall, cpu, f"floor {n // 1000}k", floors[n])
        for n in (10_000, 100_000):
            sample(wall, cpu, f"list {n // 1000}k", lambda n=n: list(conversations[n].messages))
    ratios = []
    for figures in (wall, cpu):
        med = {k: statistics.median(v) for k, v in figures.items()}
        ratios.append(_growth(med, "floor") / _growth(med, "list"))
    return ratios[0], ratios[1]

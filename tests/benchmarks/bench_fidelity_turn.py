"""One turn of an Anthropic tool loop with extended thinking and images, at 10k messages.

The history is what a host of docs/embedding.md's Anthropic loop holds: the session's
canonical messages (assistant replies keeping their original blocks under
``_anthropic_content``: thinking with signatures, text, tool_use) plus, each turn, the new
reply and its tool results as Anthropic-shaped dicts. Realistic sizes: thinking of 300-2,000
characters, tool results of 200 B - 8 kB, an image (~12 kB base64) in one user message in ten
and one tool result in twenty.

A turn = ``before_request`` + ``request`` (Anthropic) + ``after_response``, timed in rounds with
the garbage collector on, median of the rounds. Target (issue 28, the bar of issue 16 for plain
histories): turn(10k) <= 0.05 x one ``json.dumps`` of the request the SDK would send. Also
reported, without a bar: the same history sent to OpenAI Chat (thinking replaced by
placeholders, images converted: the cross-provider path, rebuilt per request).

Run: python -m pytest tests/benchmarks/bench_fidelity_turn.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import base64
import json
import random
import statistics
from pathlib import Path
from typing import Any

import pytest
from bench_turn import timed

from hermes_core import Session

ROUNDS = 9
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": base64.b64encode(random.Random(1).randbytes(9_000)).decode()}}
WORDS = ("the handler in module", "raises when", "the config is missing", "so check", "first, then",
         "read the log of", "the deploy step", "and compare with", "the failing test")


class Loop:
    """A session with extended thinking and its growing history (``turn()`` adds one step)."""

    def __init__(self, home: Path, n: int, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        self.session = Session.open(cwd=str(home), home=str(home), model="claude-sonnet-4-5",
                                    provider="anthropic", context_length=10**12, persist=False)
        raw: list[Any] = []
        while len(raw) < n:
            user: list[dict[str, Any]] = [{"type": "text", "text": self._text(40, 300)}]
            if self.rng.random() < 0.1:
                user.append(IMAGE)
            raw.append({"role": "user", "content": user})
            for _ in range(self.rng.randint(1, 4)):
                raw.extend(self._step())
            raw.append({"role": "assistant", "content": [self._thinking(), {"type": "text", "text": self._text(40, 600)}]})
        self.messages = self.session.before_request(raw[:n] if raw[n - 1]["role"] != "assistant" else raw[:n])
        self.turn()

    def _text(self, low: int, high: int) -> str:
        size = self.rng.randint(low, high)
        out = []
        while sum(len(w) + 1 for w in out) < size:
            out.append(self.rng.choice(WORDS) + f" {self.rng.randint(0, 10**6)}")
        return " ".join(out)

    def _thinking(self) -> dict[str, Any]:
        self.calls += 1
        return {"type": "thinking", "thinking": self._text(300, 2000),
                "signature": base64.b64encode(self.rng.randbytes(180)).decode()}

    def _step(self) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [self._thinking()]
        results = []
        for _ in range(self.rng.randint(1, 3)):
            self.calls += 1
            ident = f"toolu_{self.calls:08d}"
            blocks.append({"type": "tool_use", "id": ident, "name": "read_file",
                           "input": {"path": f"src/m{self.calls}.py", "limit": 200}})
            content: Any = self._text(200, int(200 * (40 ** self.rng.random())))
            if self.rng.random() < 0.05:
                content = [{"type": "text", "text": content}, IMAGE]
            results.append({"type": "tool_result", "tool_use_id": ident, "content": content})
        return [{"role": "assistant", "content": blocks}, {"role": "user", "content": results}]

    def turn(self, step: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """One turn with ``step`` (the reply and its results, made beforehand so the timing
        holds only the session's work) appended."""
        session = self.session
        messages = session.before_request([*self.messages, *(step if step is not None else self._step())])
        request = session.request(messages)
        self.messages = session.after_response({"input_tokens": 1000}, messages)
        return request


@pytest.fixture(scope="module")
def loop(tmp_path_factory: pytest.TempPathFactory) -> Loop:
    return Loop(tmp_path_factory.mktemp("fidelity-home"), 10_000)


def test_turn_with_thinking_and_images_10k(benchmark: Any, loop: Loop) -> None:
    request = loop.turn()
    assert any(b.get("type") == "thinking" for m in request["messages"] for b in m["content"])
    dumps = statistics.median(timed(lambda: json.dumps(request)) for _ in range(3))
    steps = [loop._step() for _ in range(ROUNDS)]
    turns = [timed(lambda step=step: loop.turn(step)) for step in steps]  # type: ignore[misc]
    cross = [timed(lambda: loop.session.request(loop.messages, provider="openai")) for _ in range(3)]
    turn = statistics.median(turns)
    ratio = turn / dumps
    print()
    print(f"  messages: {len(loop.messages):,}; request JSON: {len(json.dumps(request)) / 1e6:.1f} MB")
    print(f"  turn (anthropic, thinking + images) 10k: {turn * 1e3:.3f} ms  "
          f"[{min(turns) * 1e3:.3f} .. {max(turns) * 1e3:.3f}]")
    print(f"  json.dumps(request): {dumps * 1e3:.3f} ms")
    print(f"  turn / json.dumps = {ratio:.4f}  [target <= 0.05]")
    print(f"  the same history to OpenAI Chat (converted per request): "
          f"{statistics.median(cross) * 1e3:.3f} ms = {statistics.median(cross) / dumps:.3f} x json.dumps")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert ratio <= 0.05

"""A request log generator for the cache-report streaming tests and benchmark: a session whose
history is appended to request after request and rewritten (compressed) every ``segment``
requests, each request adding one tool call and its output (realistic text: code and logs)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

WORDS = ("config", "handler", "request", "session", "cache", "token", "module", "error", "value",
         "deploy", "retry", "window", "parse", "schema", "worker", "queue", "budget", "prefix")


def _output(rng: random.Random, size: int) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        name = rng.choice(WORDS)
        line = (f"    {name}_{rng.randrange(999)} = compute_{rng.choice(WORDS)}({rng.randrange(100)})"
                if rng.random() < 0.7 else f"INFO {name}: {rng.choice(WORDS)} took {rng.randrange(900)} ms")
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines)


def write_request_log(path: Path, *, requests: int, output_bytes: int, segment: int, seed: int = 7) -> int:
    """Write the log; returns its size in bytes. Streams to disk (the generator holds one entry)."""
    rng = random.Random(seed)
    tools = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                               "parameters": {"type": "object", "properties": {
                                                   "path": {"type": "string"}}}}}]
    with path.open("w", encoding="utf-8") as out:
        out.write('{"system": ' + json.dumps("You are a coding agent. " * 40) + ', "tools": ')
        out.write(json.dumps(tools) + ', "requests": [\n')
        for number in range(requests):
            call_id = f"call_{number}"
            turn: list[dict[str, Any]] = [
                {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function", "function": {
                    "name": "read_file", "arguments": json.dumps({"path": f"src/{rng.choice(WORDS)}.py"})}}]},
                {"role": "tool", "tool_call_id": call_id, "content": _output(rng, output_bytes)},
            ]
            if number % segment == 0:
                summary = {"role": "user", "content": f"[summary of requests before {number}] " + _output(rng, 2_000)}
                entry: dict[str, Any] = {"messages": [summary, {"role": "user", "content": "Go on."}, *turn]}
            else:
                entry = {"append": turn}
            out.write(("," if number else "") + json.dumps(entry) + "\n")
        out.write("]}\n")
    return path.stat().st_size

"""Benchmark: checking a bridged ``tool_call``'s arguments - jsonschema (the choice) against
fastjsonschema (the alternative) and the coercion pass alone (the floor).

Run: ``python -m pytest tests/benchmarks/bench_schema_check.py -q -p no:randomly --benchmark-only -s``

Timed through the public entry point a host calls, ``Session.handle_tool_call("tool_call",
...)`` with an ``invoke`` that returns at once, so the figures are the whole bridged call:
catalog split, argument parsing, the coercion pass, validation, result processing. The peer
runs replace only the validation step (``schema_check.validate``) and are interleaved with it,
round by round; the report is the median of the per-round ratios. fastjsonschema compiles a
schema to Python once (cached here like jsonschema's validators) but knows drafts 4-7 only, so
it gets the schema with ``$defs`` rewritten to ``definitions``.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_plugins.tools import schema_check

fastjsonschema = pytest.importorskip("fastjsonschema")

SCHEMA = {
    "type": "object",
    "$defs": {"label": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$", "maxLength": 50}},
    "properties": {
        "repo": {"type": "string", "pattern": "^[\\w.-]+/[\\w.-]+$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 256},
        "body": {"type": "string", "nullable": True},
        "labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "uniqueItems": True},
        "priority": {"type": "integer", "minimum": 0, "maximum": 4},
        "assignees": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
    },
    "required": ["repo", "title"],
    "additionalProperties": False,
}
ARGS = {"repo": "acme/widgets", "title": "Crash on start", "body": None,
        "labels": ["bug", "p1", "needs-triage"], "priority": "2", "assignees": ["ana", "bo"]}
TOOLS = [{"type": "function", "source": "mcp-github",
          "function": {"name": "create_issue", "description": "Open an issue.", "parameters": SCHEMA}}]
ROUNDS = 15
CALLS = 200


def _fast_validate() -> Any:
    draft7 = json.loads(json.dumps(schema_check.openapi_nullable(SCHEMA)).replace("$defs", "definitions"))
    compiled = fastjsonschema.compile(draft7)

    def validate(value: Any, schema: Any) -> list[str]:
        try:
            compiled(value)
        except fastjsonschema.JsonSchemaValueException as exc:
            return [exc.message]
        return []

    return validate


def _floor(value: Any, schema: Any) -> list[str]:
    return []


def _time(session: Session, arguments: str) -> float:
    started = time.perf_counter()
    for _ in range(CALLS):
        session.handle_tool_call("tool_call", arguments, invoke=lambda name, args: "ok")
    return (time.perf_counter() - started) / CALLS


@pytest.mark.benchmark(group="schema_check")
def test_bench_schema_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, benchmark: Any) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, persist=False, env={})
    session.assemble_tools(TOOLS)
    arguments = json.dumps({"calls": [{"name": "create_issue", "arguments": ARGS}]})
    assert session.handle_tool_call("tool_call", arguments, invoke=lambda n, a: "ok") == "ok"
    peers = {"jsonschema": schema_check.validate, "fastjsonschema": _fast_validate(), "floor": _floor}
    times: dict[str, list[float]] = {name: [] for name in peers}
    for _ in range(ROUNDS):
        for name, fn in peers.items():
            monkeypatch.setattr(schema_check, "validate", fn)
            times[name].append(_time(session, arguments))
    monkeypatch.setattr(schema_check, "validate", peers["jsonschema"])
    benchmark.pedantic(lambda: _time(session, arguments), rounds=3, iterations=1)
    ratio_fast = statistics.median(a / b for a, b in zip(times["jsonschema"], times["fastjsonschema"], strict=True))
    ratio_floor = statistics.median(a / b for a, b in zip(times["jsonschema"], times["floor"], strict=True))
    print(f"\nbridged tool_call, median per call: jsonschema {statistics.median(times['jsonschema']) * 1e6:.0f} us, "
          f"fastjsonschema {statistics.median(times['fastjsonschema']) * 1e6:.0f} us, "
          f"no validation {statistics.median(times['floor']) * 1e6:.0f} us; "
          f"jsonschema/fastjsonschema {ratio_fast:.2f}x, jsonschema/floor {ratio_floor:.2f}x")
    # A bridged call is one per model turn: the library must stay a small part of it.
    assert ratio_floor < 10

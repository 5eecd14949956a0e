"""The public entry points a host calls, against floors and peers timed in the same run.

* ``Session.open`` + first ``system_prompt`` as the README calls it, for the second session of a
  process (the plugin host is shared): target <= 2 ms;
* ``import hermes_core`` in a fresh interpreter against importing, in a fresh interpreter, the
  set of modules hermes_core really imports (everything it leaves in ``sys.modules`` that is not
  ``hermes_core``/``hermes_plugins`` and not already there at start-up): target <= +50 ms;
* the tool side of a turn through ``Session.assemble_tools`` + ``Session.handle_tool_call``
  (``tool_search``), unchanged catalog, against rank_bm25 rebuilding its index and querying it:
  targets >= 20x at 1,000 tools and >= 10x at 5,000 (plain dicts, proven unchanged by one
  ``==``), >= 100x (frozen catalog);
* ``hermes-ctx cache-report`` on a 5,000-message transcript: seconds, not minutes.

Medians of interleaved rounds (``paired`` from bench_tool_search), ``gc.collect()`` before each.
Run: python -m pytest tests/benchmarks/bench_public.py -p no:randomly --benchmark-only -s
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bench_payload import history
from bench_tool_search import (
    QUERIES,
    fmt,
    paired,
    rank_rebuild_query,
    synthetic_catalog,
)
from click.testing import CliRunner

from hermes_core import Session, freeze_tools
from hermes_plugins.tools.state import state_of

RESULTS: dict[str, float] = {}


def open_and_prompt(cwd: Path, home: Path | None = None) -> str:
    session = Session.open(cwd=str(cwd), home=None if home is None else str(home), model="gpt-5",
                           provider="openai", platform="cli",
                           tools=["terminal", "read_file", "memory"], context_length=200_000)
    return session.system_prompt


def test_session_open_second_session(benchmark: Any, tmp_path: Path) -> None:
    """As the README calls it, against the same call with the prompt hooks run on the caller's
    thread (``plugins.prompt_hook_budget: null``: no guard against a hanging plugin), so the
    ratio is what the guard's thread hand-off costs. Interleaved single calls, many rounds:
    one call is about a millisecond, and a median of a few dozen consecutive calls reads a
    neighbour's burst of work on this shared machine as ours."""
    from hermes_core import config_cache

    inline_home = tmp_path / "inline-home"
    inline_home.mkdir()
    (inline_home / "config.yaml").write_text("plugins:\n  prompt_hook_budget: null\n")
    time.sleep(config_cache.SETTLE_SECONDS + 0.1)  # a file written just now is read every time
    variants = {
        "as shipped (budgeted)": lambda: open_and_prompt(tmp_path),
        "no budget (inline)": lambda: open_and_prompt(tmp_path, inline_home),
    }
    for fn in variants.values():  # the first session of the process builds the shared host
        fn(), fn()
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for r in range(401):
        for name in names[r % 2:] + names[: r % 2]:
            start, start_cpu = time.perf_counter(), time.process_time()  # every thread's CPU
            variants[name]()
            cpu[name].append(time.process_time() - start_cpu)
            wall[name].append(time.perf_counter() - start)
    shipped, inline = wall["as shipped (budgeted)"], wall["no budget (inline)"]
    RESULTS["open"] = statistics.median(shipped)
    ratio = statistics.median(a / b for a, b in zip(shipped, inline, strict=True))
    print("\nSession.open + system_prompt, second session (401 interleaved rounds):")
    for name in names:
        w = sorted(wall[name])
        print(f"  {name:<24} median {fmt(statistics.median(w))}  p25 {fmt(w[len(w) // 4])}  "
              f"p75 {fmt(w[3 * len(w) // 4])}  cpu median {fmt(statistics.median(cpu[name]))}")
    print(f"  as shipped / inline: {ratio:.2f}x (median of paired ratios); target <= 2 ms")
    benchmark.pedantic(lambda: open_and_prompt(tmp_path), rounds=10, iterations=1)
    assert statistics.median(cpu["as shipped (budgeted)"]) <= 0.002


def _python(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def _import_cost(statement: str) -> tuple[float, float, int]:
    """``statement`` in a fresh interpreter against importing, in a fresh interpreter, the
    modules it leaves in ``sys.modules`` that are not ours (medians of interleaved rounds)."""
    probe = (
        f"import sys, json; before = set(sys.modules); {statement}; "
        "print(json.dumps(sorted(m for m in set(sys.modules) - before "
        "if not m.startswith(('hermes_core', 'hermes_plugins', 'hermes_engine', '__editable__')))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    modules = json.loads(out.stdout)
    reference = f"import importlib\nfor m in {modules!r}:\n    try: importlib.import_module(m)\n    except Exception: pass\n"
    samples: dict[str, list[float]] = {"ours": [], "its imports": []}
    for r in range(9):
        for name, code in ((("ours", statement), ("its imports", reference))[:: 1 if r % 2 else -1]):
            samples[name].append(_python(code))
    med = {k: statistics.median(v) for k, v in samples.items()}
    return med["ours"], med["its imports"], len(modules)


def test_import_time(benchmark: Any) -> None:
    """``import hermes_core`` (target <= +50 ms over what it imports), and what a host really
    pays: ``from hermes_core import Session`` (the session's own modules, not the plugins)."""
    for key, statement in (("import_extra", "import hermes_core"),
                           ("session_import_extra", "from hermes_core import Session")):
        ours, reference, count = _import_cost(statement)
        RESULTS[key] = ours - reference
        print(f"\n{statement}: {fmt(ours)}; its {count} imported modules alone: {fmt(reference)}; "
              f"hermes_core's own cost +{fmt(RESULTS[key])}"
              + ("  target <= +50 ms" if key == "import_extra" else ""))
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)
    assert RESULTS["import_extra"] <= 0.050


@pytest.mark.parametrize("n", (1_000, 5_000))
def test_tool_side_turn_public(benchmark: Any, n: int, tmp_path: Path) -> None:
    session = Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai",
                           context_length=200_000, persist=False)
    defs = synthetic_catalog(n)
    frozen = freeze_tools(defs)
    queries = iter(QUERIES * 100_000)

    def turn(tools: Any) -> Any:
        session.assemble_tools(tools)
        return session.handle_tool_call("tool_search", {"queries": [next(queries)], "limit": 5})

    for _ in range(4):
        turn(defs), turn(frozen)
    answer = json.loads(turn(defs))
    assert answer and "error" not in answer
    assert state_of(session.host).seen[0].copy is not None  # settled: the == proof is armed
    variants = {
        "rank_bm25 rebuild+query": lambda: rank_rebuild_query(defs, next(queries)),
        "plain dicts": lambda: turn(defs),
        "frozen catalog": lambda: turn(frozen),
    }
    table = paired(variants, reference="rank_bm25 rebuild+query", repeats=21,
                   number={1_000: 8, 5_000: 2}[n])
    benchmark.pedantic(lambda: turn(frozen), rounds=5, iterations=1)
    print(f"\n== public tool-side turn (assemble_tools + handle_tool_call), {n:,} tools ==")
    for name, row in table.items():
        print(f"{name:<26} median {fmt(row['median']):>10} wall {1 / row['ratio']:7.1f}x, "
              f"cpu {fmt(row['cpu_median']):>10} {1 / row['cpu_ratio']:7.1f}x faster than "
              "rank_bm25 rebuild+query")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    RESULTS[f"plain_{n}"] = 1 / table["plain dicts"]["ratio"]
    RESULTS[f"frozen_{n}"] = 1 / table["frozen catalog"]["ratio"]
    RESULTS[f"plain_{n}_cpu"] = 1 / table["plain dicts"]["cpu_ratio"]
    RESULTS[f"frozen_{n}_cpu"] = 1 / table["frozen catalog"]["cpu_ratio"]
    print(f"targets: plain >= {20 if n == 1_000 else 10}x, frozen >= 100x "
          "(medians of paired ratios, wall clock and thread CPU time)")


def test_cache_report_5000_messages(benchmark: Any, tmp_path: Path) -> None:
    from hermes_core.cli import cli

    path = tmp_path / "t.json"
    path.write_text(json.dumps(history(5_000)))
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["cache-report", "--json", str(path)])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 0, result.output
    RESULTS["cache_report_5000"] = elapsed
    print(f"\nhermes-ctx cache-report, 5,000 messages ({path.stat().st_size / 1e6:.1f} MB): {elapsed:.2f} s")
    benchmark.pedantic(lambda: None, rounds=1, iterations=1)

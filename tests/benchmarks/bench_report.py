"""Benchmark: the HTML report (issue 35: <= 5 MB and <= 2 s for a 300-message session; a
10k-message session stays usable).

Run: ``python -m pytest tests/benchmarks/bench_report.py -q -p no:randomly -s``

Through the public entry points, in one process (host and tokenizer loaded before timing):

* ``compress --html`` of a 300-message session (hand-made: reads, shell output with failures,
  edits): the page (``hermes_report_html``: timeline, compaction detail, render) against the
  compression it reports on, timed in the same run, interleaved; bar: the page <= 2 s and its
  size <= 5 MB;
* ``hermes-ctx report`` of the same session (replay with compactions, eval, cache replay,
  page), whole command, for the record;
* a 10,000-message session: the page stays aggregated (<= ``MAX_POINTS`` bars), under 5 MB,
  and is made in under 2 s too.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hermes_core import Session
from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_core.reports import ReportRequest
from hermes_core.tokens import exact_tokenizer
from hermes_plugins.report.data import MAX_POINTS

ROUNDS = 5
BAR_SECONDS = 2.0
BAR_BYTES = 5_000_000


def session(turns: int) -> list[dict[str, Any]]:
    """``1 + 6 * turns`` messages of a coding session (all text invented here)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"step {i}: fix src/pkg/mod_{i}.py, keep the API"})
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"r{i}", "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/pkg/mod_{i}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"r{i}",
                         "content": "".join(f"def f_{i}_{j}(x):\n    return x * {j}\n" for j in range(60))})
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": f"b{i}", "type": "function",
             "function": {"name": "bash", "arguments": json.dumps({"command": f"pytest tests/test_{i}.py -q"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"b{i}",
                         "content": f"FAILED tests/test_{i}.py::test_{i} - AssertionError: {i} != {i + 1}\n"
                                    + "".join(f"tests/test_{i}.py:{j}: in test\n" for j in range(40))
                                    + "1 failed in 0.12s\nexit code 1"})
        messages.append({"role": "assistant", "content": f"The test of step {i} fails on an off-by-one; fixed."})
    return messages


def _compress(host: PluginHost, config: Any, messages: list[dict[str, Any]], window: int) -> Any:
    s = Session.open(config=config, host=host, persist=False, context_length=window)
    try:
        after = list(s.compress(list(messages), force=True).messages)
        typed = s.engine.compression_report()
        return after, dict(typed.details) if typed else {}, s.engine
    finally:
        s.close()


def _page(host: PluginHost, messages: list[dict[str, Any]], after: list[dict[str, Any]], report: Any,
          engine: Any) -> str:
    page = host.report_html(ReportRequest(command="compress", source="bench.json", report=report,
                                          before=messages, after=after, engine=engine))
    assert page is not None
    return page


def test_report_page_of_300_messages(tmp_path: Path) -> None:
    host = PluginHost.create()
    config = load_config()
    exact_tokenizer()
    messages = session(50)[:300]
    after, report, engine = _compress(host, config, messages, 32_000)
    _page(host, messages, after, report, engine)  # warm: the vendored script read once
    pages, compresses = [], []
    page = ""
    for _ in range(ROUNDS):
        started = time.perf_counter()
        after, report, engine = _compress(host, config, messages, 32_000)
        compresses.append(time.perf_counter() - started)
        started = time.perf_counter()
        page = _page(host, messages, after, report, engine)
        pages.append(time.perf_counter() - started)
    size = len(page.encode("utf-8"))
    page_s, compress_s = statistics.median(pages), statistics.median(compresses)
    path = tmp_path / "session.json"
    path.write_text(json.dumps(messages), encoding="utf-8")
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["report", str(path), "--context-length", "32000", "--html",
                                      str(tmp_path / "r.html")], catch_exceptions=False)
    whole = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    whole_size = (tmp_path / "r.html").stat().st_size
    print(f"\n300 messages: compress --html page {page_s * 1000:.0f} ms (median of {ROUNDS}), "
          f"{size:,} bytes; the compression itself {compress_s * 1000:.0f} ms "
          f"(page/compress {page_s / compress_s:.2f}x); hermes-ctx report whole command "
          f"{whole:.2f} s, {whole_size:,} bytes")
    assert page_s <= BAR_SECONDS and size <= BAR_BYTES
    assert whole <= BAR_SECONDS * 3 and whole_size <= BAR_BYTES


def test_report_command_of_10k_messages(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    path.write_text(json.dumps(session(1_667)[:10_000]), encoding="utf-8")
    out = tmp_path / "r.html"
    started = time.perf_counter()
    result = CliRunner().invoke(cli, ["report", str(path), "--context-length", "128000", "--html", str(out)],
                                catch_exceptions=False)
    elapsed = time.perf_counter() - started
    assert result.exit_code == 0, result.output
    size = out.stat().st_size
    print(f"\n10,000 messages: hermes-ctx report whole command {elapsed:.1f} s, {size:,} bytes")
    assert size <= BAR_BYTES


def test_report_page_of_10k_messages() -> None:
    host = PluginHost.create()
    config = load_config()
    messages = session(1_667)[:10_000]
    after, report, engine = _compress(host, config, messages, 128_000)
    started = time.perf_counter()
    page = _page(host, messages, after, report, engine)
    elapsed = time.perf_counter() - started
    size = len(page.encode("utf-8"))
    print(f"\n10,000 messages: page {elapsed * 1000:.0f} ms, {size:,} bytes")
    assert page.count('data-path="timeline.series.user.') <= MAX_POINTS
    assert size <= BAR_BYTES and elapsed <= BAR_SECONDS

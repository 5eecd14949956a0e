"""cache-report's peak memory on a 20,000-request log of ~107 MB (issue 34: <= 200 MB and <= 4x
the file; the whole-file read it replaced passed 860 MB).

Run: ``python -m pytest tests/benchmarks/bench_cache_report_memory.py -q -s``

The log (tests/support/request_log_support.py) is one session: every request appends a tool call and a
~5.2 kB output (code and log lines), and a compression rewrites the history every 1,000 requests,
so the largest request holds ~5 MB of messages. Each figure is the peak RSS of a fresh process
(``ru_maxrss``): the CLI as a user runs it (streaming), and beside it, in the same run, the same
replay over the log read whole (``load_report_input``: the way every request log was read
before).

Measured 2026-12-06 (2 shared cores): log 107.2 MB, 20,000 requests: cache-report peak RSS
148 MB (1.38x the file); read whole 543 MB (5.06x); 48 s for the whole benchmark.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from request_log_support import write_request_log

REQUESTS = 20_000
OUTPUT_BYTES = 5_200
SEGMENT = 1_000

CLI = """
import resource, sys
from hermes_core.cli import cli
try:
    cli(["cache-report", sys.argv[1], "--provider", "openai", "--json"], prog_name="hermes-ctx")
except SystemExit as exit:
    code = exit.code
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, code, file=sys.stderr)
"""

WHOLE = """
import resource, sys
from hermes_core import PayloadContext, load_config
from hermes_core.host import PluginHost
from hermes_plugins.cache_report import CacheSimulator
from hermes_plugins.replay_requests import load_report_input, replay
host = PluginHost.create()
ctx = PayloadContext(provider="openai", model="", session_id="b", config=load_config(data={}, env={}), cache_ttl="5m")
simulator = CacheSimulator("openai")
for payload in replay(load_report_input(sys.argv[1]), host.payload_cache_layout, ctx, consume=True):
    simulator.add(payload)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, 0, file=sys.stderr)
"""


def _peak(code: str, path: Path) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                          timeout=1800)
    rss, status = done.stderr.strip().splitlines()[-1].split()
    assert status in ("0", "None"), done.stderr[-2000:]
    return int(rss), done.stdout


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("log") / "requests.json"
    return path, write_request_log(path, requests=REQUESTS, output_bytes=OUTPUT_BYTES, segment=SEGMENT)


def test_cache_report_peak_rss_on_a_107_mb_log(log: tuple[Path, int]) -> None:
    path, size = log
    streamed, stdout = _peak(CLI, path)
    report = json.loads(stdout)
    assert report["total"]["requests"] == REQUESTS
    whole, _ = _peak(WHOLE, path)
    mb = 1024 * 1024
    print(f"\nlog {size / mb:.1f} MB, {REQUESTS} requests: cache-report peak RSS {streamed / mb:.0f} MB "
          f"({streamed / size:.2f}x the file); read whole {whole / mb:.0f} MB ({whole / size:.2f}x)")
    assert streamed <= 200 * mb and streamed <= 4 * size
    assert whole > streamed

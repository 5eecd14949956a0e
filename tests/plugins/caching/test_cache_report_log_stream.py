"""Issue 34, cache-report streams: a request log is replayed one request at a time, with the same
report as reading it whole, its errors one line, and memory following the largest request rather
than the file (tracemalloc; the 107 MB / 20,000-request figure is in
tests/benchmarks/bench_cache_report_memory.py)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import PayloadContext, load_config
from hermes_core.cli import cli
from hermes_core.host import PluginHost
from hermes_plugins.cache_report import CacheSimulator
from hermes_plugins.replay_requests import load_report_input, replay
from hermes_plugins.request_log_stream import open_request_log

from hypothesis_budget import examples
from locations import ROOT
from request_log_support import write_request_log


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli, ["cache-report", *args], catch_exceptions=False)


def _whole(path: Path, provider: str) -> dict[str, Any]:
    """The report from the log read whole (parse_report_input), replayed the same way."""
    host = PluginHost.create()
    ctx = PayloadContext(provider=provider, model="", session_id="cache-report", config=load_config(data={}, env={}),
                         cache_ttl="5m")
    simulator = CacheSimulator(provider)
    for payload in replay(load_report_input(path), host.payload_cache_layout, ctx, consume=True):
        simulator.add(payload)
    return simulator.report()


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_the_streamed_report_equals_the_whole_read(provider: str) -> None:
    path = ROOT / "examples" / "transcripts" / "compressed_session.json"
    streamed = json.loads(_cli(str(path), "--provider", provider, "--json").stdout)
    whole = _whole(path, provider)
    assert streamed["turns"] == whole["turns"] and streamed["total"] == whole["total"]
    assert streamed["total"]["requests"] == 206 and streamed["total"]["breaks"] >= 2


def test_entry_rules_match_the_whole_read(tmp_path: Path) -> None:
    log = {"system": "Top.", "tools": [], "requests": [
        {"messages": [{"role": "system", "content": "Hoisted."}, {"role": "user", "content": "a " * 700}]},
        {"append": [{"role": "assistant", "content": "b"}, {"role": "user", "content": "c " * 700}]},
        {"system": "Given.", "tools": [{"type": "function", "function": {"name": "t", "parameters": {}}}],
         "append": [{"role": "assistant", "content": "d"}, {"role": "user", "content": "e"}]},
        {"messages": [{"role": "user", "content": "rewritten " * 300}]},
        {"append": [{"role": "assistant", "content": "f"}, {"role": "user", "content": "g"}]},
    ]}
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    opened = open_request_log(path)
    assert opened is not None
    streamed = [(s.system, s.tools, list(s.messages)) for s in opened.specs()]
    whole = [(s.system, s.tools, list(s.messages)) for s in load_report_input(path)]
    assert streamed == whole


@pytest.mark.parametrize(("text", "needle"), [
    ('{"requests": [{"messages": [{"role": "user", "content": "x"}]}], "system": "late"}', "after 'requests'"),
    ('{"requests": [{"messages": [{"role": "user", "content": "x"}]}, {"messages": 3}]}', "request 1"),
    ('{"requests": [{"messages": [{"role": "user", "content": "x"}]}, {"append": [', "not JSON"),
])
def test_a_broken_log_is_one_line_and_exit_2(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    result = _cli(str(path))
    assert result.exit_code == 2 and needle in result.stderr and str(path) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_other_shapes_are_not_taken_for_a_log(tmp_path: Path) -> None:
    for text in ('[{"role": "user", "content": "x"}]', '{"messages": [], "requests": []}', '{"system": "s"}'):
        path = tmp_path / "x.json"
        path.write_text(text)
        assert open_request_log(path) is None


def _peak(fn: Any) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_follows_the_largest_request_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "log.json"
    size = write_request_log(path, requests=400, output_bytes=20_000, segment=50)
    host = PluginHost.create()
    ctx = PayloadContext(provider="openai", model="", session_id="m", config=load_config(data={}, env={}), cache_ttl="5m")

    def streamed() -> None:
        log = open_request_log(path)
        assert log is not None
        simulator = CacheSimulator("openai", count=len)  # characters: the tokenizer is not measured here
        for payload in replay(log.specs(), host.payload_cache_layout, ctx, consume=True):
            simulator.add(payload)
        assert len(simulator.turns) == 400

    def whole() -> None:
        simulator = CacheSimulator("openai", count=len)
        for payload in replay(load_report_input(path), host.payload_cache_layout, ctx, consume=True):
            simulator.add(payload)

    stream_peak, whole_peak = _peak(streamed), _peak(whole)
    assert stream_peak < size, (stream_peak, size)  # the largest request is about an eighth of the file
    assert whole_peak > 2 * stream_peak, (whole_peak, stream_peak)  # the teeth: reading it whole does not


class _Terminal:
    def __init__(self) -> None:
        self.text = ""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass


def test_the_progress_display_is_kept_for_a_streamed_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hermes_plugins.cache_report_cli as module

    path = tmp_path / "log.json"
    write_request_log(path, requests=30, output_bytes=500, segment=10)
    terminal = _Terminal()
    monkeypatch.setattr(module, "_progress_target", lambda: terminal)
    result = _cli(str(path), "--json")
    assert result.exit_code == 0
    assert "replaying requests" in terminal.text and "100%" in terminal.text
    assert json.loads(result.stdout)["total"]["requests"] == 30  # data on stdout, unchanged


# --- property: the stream reads what the whole read reads, whatever the chunk boundaries ------


_TEXT = st.text(alphabet=st.sampled_from("ab é€😀\"\\\n{}[],:0123456789"), max_size=40)
_MESSAGE = st.one_of(
    st.builds(lambda t: {"role": "user", "content": t}, _TEXT),
    st.builds(lambda t: {"role": "assistant", "content": t}, _TEXT),
    st.builds(lambda t: {"role": "system", "content": t}, _TEXT),
)
_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "system": _TEXT,
        "tools": st.lists(st.fixed_dictionaries({"type": st.just("function"), "n": st.integers(-10**20, 10**20)}),
                          max_size=2),
    },
).flatmap(lambda base: st.one_of(
    st.builds(lambda m: {**base, "messages": m}, st.lists(_MESSAGE, max_size=4)),
    st.builds(lambda m: {**base, "append": m}, st.lists(_MESSAGE, max_size=3)),
))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_ENTRY, min_size=1, max_size=8), system=st.one_of(st.none(), _TEXT),
       chunk=st.integers(1, 64), indent=st.sampled_from([None, 1]))
def test_streamed_specs_equal_the_whole_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, entries: list[Any],
                                             system: str | None, chunk: int, indent: int | None) -> None:
    import hermes_plugins.request_log_stream as stream

    monkeypatch.setattr(stream, "CHUNK_BYTES", chunk)  # values cut anywhere, numbers too
    doc: dict[str, Any] = {} if system is None else {"system": system}
    doc["requests"] = entries
    path = tmp_path / "prop.json"
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=False), encoding="utf-8")
    log = open_request_log(path)
    assert log is not None
    streamed = [(s.system, s.tools, list(s.messages)) for s in log.specs()]
    whole = [(s.system, s.tools, list(s.messages)) for s in load_report_input(path)]
    assert streamed == whole

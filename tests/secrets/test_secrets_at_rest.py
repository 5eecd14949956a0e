"""Planted secrets of every family never reach the store's file bytes, the spill folder, the
logs or any CLI output (history list/search/show, cache-report, compress --json).

A session with the SQLite store compacts a history in which the secrets stand in user turns,
tool call arguments (JSON) and tool results; a big tool result full of them is spilled; then the
CLI reads the same home. Every byte written under the home and every byte printed is searched
for every planted secret.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import Session, ToolCallContext
from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_core.logging import ROOT
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.session_store import close_connections
from hermes_plugins.tools.spill import process_tool_result

from hypothesis_budget import examples
from recall_support import TestEngines, call
from secret_samples import SAMPLES
from secret_sinks import redis_bytes

_FILLER = " ".join(f"line{i} passed" for i in range(40))


def _history(texts: list[str]) -> list[dict[str, Any]]:
    """Each planted text in a user turn, a tool call's JSON arguments and a tool result."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for t, text in enumerate(texts * 2 + ["done"] * 4, start=1):
        messages.append({"role": "user", "content": f"step {t}: use this\n{text}"})
        messages.append({"role": "assistant", "content": "",
                         "tool_calls": [call(f"c{t}", "terminal", json.dumps({"command": f"echo {text}"}))]})
        messages.append({"role": "tool", "tool_call_id": f"c{t}", "content": f"{_FILLER}\n{text}\n{_FILLER}"})
        messages.append({"role": "assistant", "content": f"turn {t} done"})
    return messages


def _bytes_under(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(home.rglob("*")) if p.is_file())


def _leaks(secrets: list[str], blob: str | bytes) -> list[str]:
    if isinstance(blob, bytes):
        return [s for s in secrets if s.encode() in blob or json.dumps(s)[1:-1].encode() in blob]
    return [s for s in secrets if s in blob or json.dumps(s)[1:-1] in blob]


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage() + json.dumps(getattr(record, "hermes_event", {}), default=str))


@pytest.mark.parametrize("engine", ["drophalf", "compressor"])
def test_every_family_planted_at_once_reaches_no_store_spill_log_or_cli_output(engine: str) -> None:
    # drophalf archives the messages as they are; the built-in compressor also writes a summary
    # and its state (previous summary) into the store.
    _check_sinks(SAMPLES, engine=engine)


@settings(max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SAMPLES), min_size=2, max_size=5, unique=True))
def test_planted_secrets_never_reach_the_store_the_spill_folder_the_logs_or_the_cli(samples: list[Any]) -> None:
    _check_sinks(samples)


def _check_sinks(samples: list[Any], *, engine: str = "drophalf") -> None:
    texts = [text for _, text, _ in samples]
    secrets = [secret for _, _, secret in samples]
    capture = _Capture()
    root = logging.getLogger(ROOT)
    level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            host = PluginHost.create()
            host.register(TestEngines(), "test_engines")
            session = Session.open(cwd=home, home=home, model="m", context_length=64_000, session_id="s1", host=host,
                                   config=load_config(data={"context": {"engine": engine}}))
            session.compress(_history(texts))
            ctx = ToolCallContext(tool_name="terminal", tool_call_id="big", home=home, config=session.config,
                                  context_length=32_000, session=session)
            spilled = process_tool_result("\n".join([_FILLER] * 400 + texts * 3), ctx)
            assert "<persisted-output>" in spilled
            archive_of(session).flush()
            assert len(archive_of(session)) > 0
            refs = [entry["ref"] for entry in archive_of(session).search("step", limit=50)]
            session.close()
            close_connections()
            assert _leaks(secrets, _bytes_under(home)) == []

            runner = CliRunner()
            outputs = [runner.invoke(cli, ["--home", tmp, "history", *args], catch_exceptions=False)
                       for args in (["list"], ["list", "--json"], ["search", "s1", "step", "--json", "--limit", "50"],
                                    ["search", "s1", "use this"])]
            outputs += [runner.invoke(cli, ["--home", tmp, "history", "show", "s1", ref, *flag], catch_exceptions=False)
                        for ref in refs[:6] for flag in ([], ["--json"])]
            transcript = home / "t.json"
            transcript.write_text(json.dumps(
                {"system": "You are terse. " * 300, "messages": _history(texts)[1:9]}))
            outputs.append(runner.invoke(cli, ["--home", tmp, "cache-report", str(transcript), "--json"]))
            outputs.append(runner.invoke(cli, ["--home", tmp, "cache-report", str(transcript)]))
            outputs.append(runner.invoke(cli, ["--home", tmp, "compress", str(transcript), "--json"]))
            for result in outputs:
                assert result.exit_code in (0, 1), result.output
                assert _leaks(secrets, result.output) == [], result.output
            close_connections()
    finally:
        root.removeHandler(capture)
        root.setLevel(level)
    assert _leaks(secrets, "\n".join(capture.lines)) == []


def test_a_log_event_quoting_a_secret_is_masked_and_logging_config_is_untouched() -> None:
    from hermes_core.diagnostics import collecting, record_warning
    from hermes_core.logging import get_logger

    secret = SAMPLES[0][2]
    capture = _Capture()
    root = logging.getLogger(ROOT)
    before = (logging.getLogger().handlers[:], logging.getLogger().level, root.level, root.handlers[:])
    root.addHandler(capture)
    root.setLevel(logging.INFO)
    try:
        get_logger("hermes_core.test").info("tool_failed", error=f"bad key {SAMPLES[0][1]}")
        with collecting() as bucket:
            record_warning("x", f"could not use {SAMPLES[0][1]}", path="/tmp/a")
    finally:
        root.removeHandler(capture)
        root.setLevel(before[2])
    assert capture.lines and not _leaks([secret], "\n".join(capture.lines))
    assert "[REDACTED:openai#" in "\n".join(capture.lines)
    assert secret not in bucket[0].message and "[REDACTED:openai#" in bucket[0].message
    assert (logging.getLogger().handlers, logging.getLogger().level, root.handlers) == (before[0], before[1], before[3])


def test_the_redis_store_holds_no_planted_secret(tmp_path: Path) -> None:
    from hermes_plugins.archive.session_archive import SessionArchive
    from hermes_plugins.redis_store import RedisSessionStore

    from redis_support import redis_server

    texts = [text for _, text, _ in SAMPLES]
    secrets = [secret for _, _, secret in SAMPLES]
    history = _history(texts)
    with redis_server(tmp_path) as url:
        store = RedisSessionStore(url, key_prefix="sec:")
        archive = SessionArchive(session_id="s1", store=store)
        archive.record(history, [history[0], *history[-8:]])
        archive.flush()
        assert len(archive) > len(texts)
        dump = redis_bytes(url, "sec:")
        assert len(dump) > 10_000
        assert _leaks(secrets, dump) == []


def test_a_cli_error_quoting_a_secret_is_masked(tmp_path: Path) -> None:
    # The error names the bad argument, as errors should: on screen, without the secret.
    secret = SAMPLES[0][2]
    result = CliRunner().invoke(cli, ["--home", str(tmp_path), "history", "show", "s1", "sk-proj-" + secret])
    assert result.exit_code == 2 and "is not an archive reference" in result.stderr
    assert secret not in result.output and secret not in result.stderr and "sk-proj-[REDACTED:openai#" in result.stderr

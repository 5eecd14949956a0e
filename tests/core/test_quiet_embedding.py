"""Embedded in someone else's program, the library writes nothing to stdout or stderr.

A host that speaks JSON lines (or MCP) over stdout must get only its own lines back. The child
process below runs a whole session - a prompt built with a truncation warning and a broken
plugin, requests, a compression after a response - and writes one JSON line per step.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from hermes_core.logging import ROOT, configure_logging, get_logger, reset_logging

CHILD = textwrap.dedent(
    r"""
    import json, sys
    from pathlib import Path
    from hermes_core import Session, hookimpl

    class Broken:
        @hookimpl
        def hermes_prompt_identity(self, ctx):
            raise RuntimeError("boom")

    def say(**kw):
        sys.stdout.write(json.dumps(kw) + "\n")
        sys.stdout.flush()

    work = Path(sys.argv[1])
    home = work / "home"; home.mkdir()
    (work / "project").mkdir()
    (work / "project" / "AGENTS.md").write_text("rule line\n" * 5000)
    (home / "config.yaml").write_text("context:\n  file_max_chars: 2000\n")
    from hermes_core.host import PluginHost
    host = PluginHost.create(plugins=[(Broken(), "broken")])
    events = []
    session = Session.open(cwd=work / "project", home=home, model="test-model", provider="openai",
                           context_length=64_000, host=host, on_status=events.append)
    say(step="prompt", chars=len(session.system_prompt))
    messages = [{"role": "user", "content": "look at the code"}]
    for i in range(60):
        cid = f"call_{i}"
        messages.append({"role": "assistant", "content": "", "tool_calls": [
            {"id": cid, "type": "function",
             "function": {"name": "read_file", "arguments": json.dumps({"path": f"m{i}.py"})}}]})
        messages.append({"role": "tool", "tool_call_id": cid, "content": "x = 1\n" * 400})
        messages = session.before_request(messages)
        session.request(messages, provider="anthropic")
        messages = session.after_response({"prompt_tokens": 2000 + 2000 * i}, messages)
    say(step="done", messages=len(messages), compactions=len(events),
        warnings=[w.kind for w in session.warnings])
    session.close()
    """
)


def test_a_whole_embedded_session_writes_only_the_hosts_lines(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["step"] for line in lines] == ["prompt", "done"]
    done = lines[-1]
    # The session really did warn and compress, so silence is not for lack of events.
    assert done["compactions"] >= 1
    assert "plugin_hook_failed" in done["warnings"]
    assert any("truncat" in kind for kind in done["warnings"])


def test_the_hosts_logging_set_up_decides_where_records_go(tmp_path: Path) -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep(logging.DEBUG)
    logging.getLogger().addHandler(handler)
    logging.getLogger(ROOT).setLevel(logging.INFO)
    try:
        get_logger("hermes_plugins.example").info("thing_happened", path="a.md", count=2)
        get_logger("hermes_core.session").debug("too_detailed")
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger(ROOT).setLevel(logging.NOTSET)
    assert len(records) == 1
    record = records[0]
    assert record.name == "hermes_core.plugins.hermes_plugins.example"
    assert record.getMessage() == "thing_happened path='a.md' count=2"
    event: dict[str, Any] = record.hermes_event  # type: ignore[attr-defined]
    assert event["event"] == "thing_happened" and event["count"] == 2


def test_the_cli_set_up_renders_json_to_stderr_only(capsys: Any) -> None:
    configure_logging(verbosity=1, log_format="json")
    try:
        get_logger("hermes_core.test").info("rendered", key="value")
        get_logger("hermes_core.test").debug("hidden")
    finally:
        reset_logging()
    out, err = capsys.readouterr()
    assert out == ""
    lines = [json.loads(line) for line in err.splitlines()]
    assert [line["event"] for line in lines] == ["rendered"]
    assert lines[0]["key"] == "value" and lines[0]["log_level"] == "info"


def test_no_color_turns_colours_off(monkeypatch: Any, capsys: Any) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    configure_logging(verbosity=1, log_format="console", color=None)
    try:
        get_logger("hermes_core.test").warning("plain_text")
    finally:
        reset_logging()
    err = capsys.readouterr().err
    assert "plain_text" in err and "\x1b[" not in err


def test_a_disabled_event_builds_nothing(monkeypatch: Any) -> None:
    """A library logger is one bound logger for its life: a disabled debug event in a per-turn
    path is a level check, not a new logger assembled per call (structlog's lazy proxy did that)."""
    from hermes_core.logging import HermesLogger, get_logger

    log = get_logger("hermes_core.test_disabled")
    built: list[int] = []
    original = HermesLogger.__init__

    def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(1)
        original(self, *args, **kwargs)

    monkeypatch.setattr(HermesLogger, "__init__", counting)
    logging.getLogger("hermes_core.test_disabled").setLevel(logging.WARNING)
    for _ in range(5):
        log.debug("nothing_to_see", n=1)
    assert built == []
    bound = log.bind(session="s1")
    assert isinstance(bound, HermesLogger) and bound is not log

"""Every place issue 31 says a secret must not reach, driven through the public entry points,
for a history that holds planted secrets: ``sink_outputs`` returns what each sink holds.

The sinks: the SQLite archive (every byte under the home after a compaction and a spill), the
spill folder, what the LLM summariser receives (a local fake OpenAI server), the log events
(stderr's structlog events, captured from the ``hermes`` logger), and the CLI's output:
``history list/search/show`` (text and ``--json``), ``cache-report`` (table, ``--json``,
``--html``), ``eval`` (table, ``--json``), ``report`` (``--json``, ``--html``) and
``compress`` (``--json``, ``--html``) - stdout and stderr both. Redis is checked apart (it needs
a redis-server: ``redis_dump``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from hermes_core import Session, ToolCallContext
from hermes_core.cli import cli
from hermes_core.config import load_config
from hermes_core.logging import ROOT
from hermes_plugins.archive.plugin import archive_of
from hermes_plugins.session_store import close_connections
from hermes_plugins.tools.spill import process_tool_result

from fake_llm_servers import openai_completion, running
from secret_corpus import Sample, in_context

_FILLER = " ".join(f"line{i} passed" for i in range(40))


def planted_history(samples: Iterable[Sample], *, tail: int = 6) -> list[dict[str, Any]]:
    """A valid OpenAI-chat history holding each sample in every context: user text, a tool
    call's JSON arguments, a ``cat`` tool result, an API's JSON answer, assistant text; then
    ``tail`` plain turns (what a compaction keeps)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n, sample in enumerate(samples):
        call = in_context(sample, "tool_args", n)
        call["tool_calls"] += [
            {"id": f"r{n}", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "cat x"}'}},
            {"id": f"j{n}", "type": "function", "function": {"name": "http_get", "arguments": '{"url": "/items"}'}},
        ]
        messages += [
            in_context(sample, "user", n), call,
            {"role": "tool", "tool_call_id": f"a{n}", "content": "written"},
            in_context(sample, "tool_result", n), in_context(sample, "api_json", n),
            in_context(sample, "assistant", n),
        ]
    for t in range(tail):
        messages += [{"role": "user", "content": f"next step {t}: {_FILLER}"},
                     {"role": "assistant", "content": f"step {t} done"}]
    return messages


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage() + json.dumps(getattr(record, "hermes_event", {}), default=str))


def _bytes_under(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()) if folder.exists() else b""


def sink_outputs(home: Path, messages: list[dict[str, Any]], *, cli_runs: bool = True) -> dict[str, str | bytes]:
    """What each sink holds after ``messages`` went through a session (compaction with the LLM
    summariser, a spill of their text) and, with ``cli_runs``, through every CLI command."""
    out: dict[str, str | bytes] = {}
    capture = _Capture()
    root = logging.getLogger(ROOT)
    level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        with running("openai") as server:
            server.push(openai_completion("## Goal\nKeep going.\n## Progress\nSteps done."))
            config = load_config(data={"context": {"engine": "compressor"}, "compression": {"summary": {
                "provider": "openai", "model": "summary-model", "base_url": server.base_url, "timeout": 10}}})
            session = Session.open(cwd=home, home=home, model="m", context_length=64_000, session_id="s1",
                                   config=config, env={})
            session.compress(messages, force=True)
            ctx = ToolCallContext(tool_name="terminal", tool_call_id="big", home=home, config=session.config,
                                  context_length=32_000, session=session)
            text = "\n".join(str(m.get("content") or json.dumps(m.get("tool_calls"))) for m in messages)
            spilled = process_tool_result("\n".join([_FILLER] * 400) + "\n" + text, ctx)
            assert "<persisted-output>" in spilled, "the big tool result was not spilled"
            archive = archive_of(session)
            archive.flush()
            assert len(archive) > 0, "nothing was archived"
            refs = [entry["ref"] for entry in archive.search("found this in the repository", limit=20)]
            session.close()
            close_connections()
            out["summariser_input"] = b"".join(r.body for r in server.requests)
            assert server.requests, "the LLM summariser was not called"
        out["spill_folder"] = b"".join(_bytes_under(p) for p in home.rglob("*") if p.is_dir() and "spill" in p.name)
        out["store_and_home"] = _bytes_under(home)
        if cli_runs:
            out.update(_cli_outputs(home, messages, refs))
    finally:
        root.removeHandler(capture)
        root.setLevel(level)
        close_connections()
    out["logs"] = "\n".join(capture.lines)
    return out


def _cli_outputs(home: Path, messages: list[dict[str, Any]], refs: list[str]) -> dict[str, str | bytes]:
    runner = CliRunner()
    out: dict[str, str | bytes] = {}
    transcript = home / "transcript.json"
    transcript.write_text(json.dumps({"system": "You are terse. " * 300, "messages": messages[1:]}))

    def run(name: str, *args: str, html: Path | None = None) -> None:
        result = runner.invoke(cli, ["--home", str(home), *args], catch_exceptions=False)
        assert result.exit_code in (0, 1), f"{name}: exit {result.exit_code}\n{result.output}"
        out[name] = result.output + result.stderr
        if html is not None:
            out[name + "_page"] = html.read_bytes()

    run("history list", "history", "list")
    run("history list --json", "history", "list", "--json")
    run("history search", "history", "search", "s1", "cat")
    run("history search --json", "history", "search", "s1", "step", "--json", "--limit", "50")
    for i, ref in enumerate(refs[:6]):
        run(f"history show {i}", "history", "show", "s1", ref)
        run(f"history show {i} --json", "history", "show", "s1", ref, "--json")
    run("cache-report", "cache-report", str(transcript))
    run("cache-report --json", "cache-report", str(transcript), "--json", "--html", str(home / "c.html"),
        html=home / "c.html")
    run("eval", "eval", str(transcript), "--context-length", "8000")
    run("eval --json", "eval", str(transcript), "--context-length", "8000", "--json")
    run("report --json", "report", str(transcript), "--json", "--context-length", "8000",
        "--html", str(home / "r.html"), html=home / "r.html")
    run("compress --json", "compress", str(transcript), "--json", "--context-length", "8000",
        "--html", str(home / "p.html"), html=home / "p.html")
    return out


def redis_bytes(url: str, prefix: str) -> bytes:
    """Every byte of every value the Redis server at ``url`` holds under keys ``prefix*``."""
    import redis

    client = redis.Redis.from_url(url)
    dump = b""
    try:
        for key in client.scan_iter(prefix + "*"):
            kind = client.type(key)
            if kind == b"string":
                dump += client.get(key) or b""
            elif kind == b"hash":
                dump += b"".join(k + v for k, v in client.hgetall(key).items())
            elif kind == b"list":
                dump += b"".join(client.lrange(key, 0, -1))
            elif kind == b"zset":
                dump += b"".join(client.zrange(key, 0, -1))
            elif kind == b"set":
                dump += b"".join(client.smembers(key))
    finally:
        client.close()
    return dump


def redis_dump(url: str, messages: list[dict[str, Any]], prefix: str = "sec:") -> bytes:
    """Every byte the Redis store holds after ``messages`` were archived (all but the last 8 left)."""
    from hermes_plugins.archive.session_archive import SessionArchive
    from hermes_plugins.redis_store import RedisSessionStore

    store = RedisSessionStore(url, key_prefix=prefix)
    archive = SessionArchive(session_id="s1", store=store)
    archive.record(messages, [messages[0], *messages[-8:]])
    archive.flush()
    assert len(archive) > 0, "nothing was archived"
    return redis_bytes(url, prefix)

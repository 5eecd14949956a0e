"""A session lifecycle with a compaction leaves the host's process as it found it (issue 32).

Threads and executors a session starts are gone after ``close()`` / ``async with``; no
``atexit`` callback is added per session; the garbage collector, the logging configuration,
the signal handlers and the recursion limit are untouched; nothing is written to stdout.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import AsyncSession, Session
from hermes_plugins.archive.plugin import archive_of


def _history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for t in range(turns):
        messages.append({"role": "user", "content": f"step {t}: run the tests of module_{t} " * 8})
        messages.append({"role": "assistant", "content": "", "tool_calls": [{
            "id": f"c{t}", "type": "function",
            "function": {"name": "terminal", "arguments": json.dumps({"command": f"pytest tests/test_m{t}.py"})},
        }]})
        messages.append({"role": "tool", "tool_call_id": f"c{t}",
                         "content": "\n".join(f"line {i} of step {t}" for i in range(150))})
        messages.append({"role": "assistant", "content": f"Step {t} done."})
    messages.append({"role": "user", "content": "Now fix the remaining failures."})
    return messages


def _process_state() -> dict[str, Any]:
    root = logging.getLogger()
    ours = logging.getLogger("hermes_core")
    return {
        "gc": (gc.isenabled(), gc.get_threshold(), gc.isenabled()),
        "recursion": sys.getrecursionlimit(),
        "signals": {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)},
        "root": (list(root.handlers), root.level),
        "ours": (list(ours.handlers), ours.level, ours.propagate, ours.disabled),
        "atexit": atexit._ncallbacks(),
    }


def _our_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("hermes")}


def _open(home: Path, **extra: Any) -> dict[str, Any]:
    return dict(cwd=str(home), home=str(home), model="gpt-4o", provider="openai", context_length=16_000,
                env={}, **extra)


def test_a_sync_lifecycle_with_compactions_leaves_the_process_as_it_found_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # First use: imports, shared hosts and caches made once per process are not a session's.
    with Session.open(**_open(tmp_path)) as warm:
        warm.compress(_history(10), force=True)
    before, threads = _process_state(), _our_threads()
    for _ in range(3):
        session = Session.open(**_open(tmp_path))
        assert session.system_prompt
        session.compress(_history(40), force=True)  # archived to sessions.db by its writer
        session.before_request(_history(60))
        assert archive_of(session).search("module_3")  # a read after the writes
        session.close()
    assert _our_threads() - threads == set()
    assert _process_state() == before
    assert capsys.readouterr().out == ""


def test_an_async_lifecycle_leaves_no_worker_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async def lifecycle() -> None:
        async with await AsyncSession.open(**_open(tmp_path)) as session:
            await session.compress(_history(30), force=True)
            await session.before_request(_history(50))

    asyncio.run(lifecycle())  # first use
    before, threads = _process_state(), _our_threads()
    for _ in range(2):
        asyncio.run(lifecycle())
    assert _our_threads() - threads == set()
    assert not [t for t in threading.enumerate() if t.name.startswith("hermes-async")]
    assert _process_state() == before
    assert capsys.readouterr().out == ""

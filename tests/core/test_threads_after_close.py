"""A good guest: no thread a session started is left running once it is closed.

Each test opens a session with one feature on (context files read under a timeout, the SQLite
store and archive, the Redis store, the LLM summariser over HTTP, the async session), uses it,
closes it, and then checks that every thread named ``hermes...`` that appeared meanwhile is gone.
A thread still on its way out (its last job done) gets a short join; a worker that waits for
more work never ends and fails the test.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hermes_core import AsyncSession, Session, load_config
from hermes_plugins.context_files import reading

from fake_llm_servers import openai_completion, running
from recall_support import history
from redis_support import redis_server

#: How long a thread on its way out may take to return: a hang guard on two shared cores, far
#: above the microseconds it needs; a thread waiting for work never returns at all.
EXIT_GUARD = 2.0
SUMMARY = "## Goal\nKeep going.\n## Progress\nSteps done."


def _ours() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("hermes")}


def still_running(before: set[threading.Thread], readers: Sequence[threading.Thread] = ()) -> list[str]:
    """Names of the ``hermes`` threads started since ``before``, and of the threads that read
    context files (a reused worker may predate ``before``), that do not end within the guard."""
    left = []
    for thread in (_ours() - before) | set(readers):
        thread.join(EXIT_GUARD)
        if thread.is_alive():
            left.append(thread.name)
    return sorted(left)


@pytest.fixture
def readers(monkeypatch: pytest.MonkeyPatch) -> list[threading.Thread]:
    """The threads that ran context-file reads (whatever pool they came from)."""
    seen: list[threading.Thread] = []
    real = reading._read_bounded

    def recording(path: Path, max_chars: int) -> Any:
        seen.append(threading.current_thread())
        return real(path, max_chars)

    monkeypatch.setattr(reading, "_read_bounded", recording)
    return seen


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    (home / "SOUL.md").write_text("You are a careful engineer.\n")
    (cwd / "AGENTS.md").write_text("Run the tests before every commit.\n")
    return home, cwd


def _data(**sections: Any) -> dict[str, Any]:
    return {"context": {"file_read_timeout": 5.0, **sections.pop("context", {})}, **sections}


def test_context_file_reads_leave_no_thread(project: tuple[Path, Path], readers: list[threading.Thread]) -> None:
    home, cwd = project
    before = _ours()
    session = Session.open(cwd=cwd, home=home, model="m", persist=False, env={},
                           config=load_config(home=home, env={}, data=_data()))
    assert "Run the tests before every commit." in session.system_prompt
    session.close()
    assert readers, "no context file was read on a worker thread"
    assert all(t is not threading.current_thread() for t in readers)
    assert still_running(before, readers) == []


def _compact(session: Session) -> None:
    session.system_prompt
    session.compress(history(12, facts={2: "ModuleNotFoundError: No module named 'yaml'"}), force=True)


def _summarising(home: Path, base_url: str) -> Any:
    """The compressor engine with an LLM summary from the local server at ``base_url``."""
    return load_config(home=home, env={}, data=_data(
        context={"engine": "compressor"},
        compression={"summary": {"provider": "openai", "model": "summary-model",
                                 "base_url": base_url, "timeout": 10}}))


def test_sqlite_store_archive_and_summariser_leave_no_thread(
    project: tuple[Path, Path], readers: list[threading.Thread]
) -> None:
    home, cwd = project
    before = _ours()
    with running("openai") as server:
        server.push(openai_completion(SUMMARY))
        config = _summarising(home, server.base_url)
        session = Session.open(cwd=cwd, home=home, model="m", context_length=64_000, env={}, config=config)
        _compact(session)
        session.close()
        assert server.requests, "the summariser was not called"
    assert (home / "sessions.db").exists() or list(home.rglob("*.db")), "nothing was stored in SQLite"
    assert readers
    assert still_running(before, readers) == []


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_redis_store_leaves_no_thread(
    project: tuple[Path, Path], redis_url: str, readers: list[threading.Thread]
) -> None:
    home, cwd = project
    before = _ours()
    config = load_config(home=home, env={}, data=_data(
        context={"engine": "compressor"},
        session_store={"backend": "redis", "url": redis_url, "key_prefix": "threads:"}))
    session = Session.open(cwd=cwd, home=home, model="m", context_length=64_000, env={}, config=config)
    assert type(session.store.wrapped).__name__ == "RedisSessionStore"
    _compact(session)
    session.close()
    assert readers
    assert still_running(before, readers) == []


def _async_run(main: Callable[[], Any]) -> Any:
    return asyncio.run(main())


def test_async_session_leaves_no_thread(project: tuple[Path, Path], readers: list[threading.Thread]) -> None:
    home, cwd = project
    before = _ours()
    with running("openai") as server:
        server.push(openai_completion(SUMMARY))
        config = _summarising(home, server.base_url)

        async def main() -> str:
            session = await AsyncSession.open(cwd=cwd, home=home, model="m", context_length=64_000,
                                              env={}, config=config)
            prompt = await session.prompt()
            await session.compress(history(12), force=True)
            await session.close()
            return prompt

        assert "Run the tests before every commit." in _async_run(main)
    assert readers
    assert still_running(before, readers) == []


def test_a_summary_call_past_its_deadline_leaves_no_thread(
    project: tuple[Path, Path], readers: list[threading.Thread]
) -> None:
    home, cwd = project
    before = _ours()
    never = threading.Event()  # the answer comes only after the test: the call is abandoned
    with running("openai") as server:
        server.push(openai_completion(SUMMARY, gate=never))
        config = load_config(home=home, env={}, data=_data(
            context={"engine": "compressor"},
            compression={"summary": {"provider": "openai", "model": "summary-model",
                                     "base_url": server.base_url, "timeout": 1.0}}))
        session = Session.open(cwd=cwd, home=home, model="m", context_length=64_000, env={}, config=config)
        try:
            _compact(session)
            fallback = [w.message for w in session.warnings if w.kind == "compression_summary_fallback"]
            assert fallback and "timeout" in fallback[0]
            session.close()
            assert still_running(before, readers) == []
        finally:
            never.set()

"""Runtime paths the rest of the suite never reached: AsyncSession's delegating methods and
loop helpers, the daemon pool after a fork and in its empty-queue race, a remote store's own
HermesError, lease renewal and release faults, compaction's unknown window, a long-context tier
refusal, a raising status callback, a failing tokenizer plugin in strict mode."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import queue
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from hermes_core import AsyncSession, ContextOverflowError, PluginHost, Session, StoreError, aio, hookimpl
from hermes_core.daemon_pool import DaemonPool, _reset_in_child
from hermes_core.diagnostics import collecting
from hermes_core.lease import compaction_lease
from hermes_core.store_guard import BudgetedStore, TurnBudget

# --- aio -------------------------------------------------------------------------------------


def _conversation() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"},
    ]


def test_async_session_delegates_each_step_to_the_session(tmp_path: Path) -> None:
    async def main() -> None:
        session = await AsyncSession.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="gpt-4o")
        try:
            assert repr(session) == f"Async{session.session!r}"
            assert session.warnings == session.session.warnings == []
            with pytest.raises(AttributeError):
                session._not_there  # noqa: B018
            # not an overflow: nothing to do, as the sync session answers
            assert await session.on_provider_error(ValueError("invalid api key"), _conversation()) is None
            assert await session.process_tool_result("small", tool_name="ls") == session.session.process_tool_result("small", tool_name="ls")
            results = [{"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"}]
            assert await session.fit_tool_results(results) == session.session.fit_tool_results(results)
        finally:
            await session.close()

    asyncio.run(main())


def test_host_loop_is_none_on_the_loops_own_thread() -> None:
    async def main() -> None:
        token = aio._host_loop.set(asyncio.get_running_loop())
        try:
            assert aio.host_loop() is None  # waiting here would deadlock
            seen = await asyncio.to_thread(aio.host_loop)
            assert seen is asyncio.get_running_loop()
        finally:
            aio._host_loop.reset(token)

    asyncio.run(main())


def test_run_on_host_loop_gives_up_after_its_timeout() -> None:
    async def main() -> None:
        release = asyncio.Event()

        async def slow() -> str:
            await release.wait()
            return "late"

        loop = asyncio.get_running_loop()
        with pytest.raises(concurrent.futures.TimeoutError):
            await asyncio.to_thread(aio.run_on_host_loop, slow(), loop, 0.05)
        await asyncio.sleep(0)  # the cancelled coroutine is gone, not left waiting
        assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    asyncio.run(main())


def test_a_plain_invoke_runs_in_the_worker() -> None:
    loop = asyncio.new_event_loop()
    try:
        call = aio._invoke_on_loop(lambda name, args: f"{name}:{args['x']}", loop)
        assert call is not None and call("echo", {"x": 1}) == "echo:1"  # no trip to the loop
    finally:
        loop.close()


# --- daemon pool ----------------------------------------------------------------------------


def test_a_forked_child_gets_a_working_pool() -> None:
    pool = DaemonPool(2, thread_name_prefix="untested-fork")
    pool._lock.acquire()  # a parent's worker holds the lock when the fork happens
    try:
        pid = os.fork()
        if pid == 0:  # the child: a fresh lock and queue, or this hangs
            done = threading.Event()
            result: list[int] = []
            threading.Thread(target=lambda: (result.append(pool.submit(lambda: 42).result()), done.set()),
                             daemon=True).start()
            os._exit(0 if done.wait(5) and result == [42] else 3)
    finally:
        pool._lock.release()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_reset_in_child_renews_a_live_pool_and_ignores_a_dead_one() -> None:
    pool = DaemonPool(1, thread_name_prefix="untested-reset")
    held = pool._lock
    held.acquire()
    _reset_in_child(weakref.ref(pool))
    assert pool._lock is not held and pool.submit(lambda: "ok").result(timeout=5) == "ok"

    class Gone:
        pass

    gone = Gone()
    ref = weakref.ref(gone)
    del gone
    _reset_in_child(ref)  # type: ignore[arg-type]  # nothing to reset, no error


class _EmptyOnce:
    """A queue whose first ``get_nowait`` misses an item put at that moment (the race the
    worker's re-check under the lock is for)."""

    def __init__(self) -> None:
        self.inner: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.missed = False

    def put(self, item: Any) -> None:
        self.inner.put(item)

    def get_nowait(self) -> Any:
        if not self.missed:
            self.missed = True
            raise queue.Empty
        return self.inner.get_nowait()

    def empty(self) -> bool:
        return self.inner.empty()


def test_a_worker_that_misses_a_queued_job_looks_again() -> None:
    pool = DaemonPool(1, thread_name_prefix="untested-race")
    pool._queue = _EmptyOnce()  # type: ignore[assignment]
    assert pool.submit(lambda: "ran").result(timeout=5) == "ran"


# --- store guard ----------------------------------------------------------------------------


class _RemoteStore:
    remote = True
    label = "fake-remote"
    version = 3

    def get_prompt(self, key: str) -> Any:
        raise StoreError("fake-remote: key refused", store="fake-remote")

    def _private(self) -> str:
        return "direct"


def test_a_budgeted_store_passes_its_own_errors_and_plain_attributes_through() -> None:
    store = BudgetedStore(_RemoteStore(), TurnBudget(2.0))
    assert store.version == 3 and store.label == "fake-remote"
    assert store._private() == "direct"  # private methods are not wrapped
    with pytest.raises(StoreError, match="^fake-remote: key refused$"):
        store.get_prompt("k")


# --- lease --------------------------------------------------------------------------------


class _LeaseStore:
    def __init__(self, renew: Any, release_fails: bool) -> None:
        self._renew = renew
        self.release_fails = release_fails

    def acquire_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        return True

    def renew_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        return bool(self._renew())

    def release_lease(self, session_id: str, token: str) -> None:
        if self.release_fails:
            raise ConnectionError("store went away")


def _hold(store: _LeaseStore, events: list[dict[str, Any]], wanted: str) -> None:
    with compaction_lease(store, "s1", ttl=0.03, wait=0):
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(e["event"] == wanted for e in events):
            time.sleep(0.01)


def test_a_lost_lease_stops_renewing(capture_events: list[dict[str, Any]]) -> None:
    calls: list[int] = []
    _hold(_LeaseStore(lambda: calls.append(1), release_fails=False), capture_events, "compaction_lease_lost")
    assert [e["event"] for e in capture_events] == ["compaction_lease_lost"]
    assert calls == [1]  # no renewal after the lease was lost


def test_renewal_and_release_faults_are_logged(capture_events: list[dict[str, Any]]) -> None:
    def failing() -> bool:
        raise ConnectionError("no route")

    _hold(_LeaseStore(failing, release_fails=True), capture_events, "compaction_lease_renew_failed")
    events = [e["event"] for e in capture_events]
    assert "compaction_lease_renew_failed" in events
    assert events[-1] == "compaction_lease_release_failed"


# --- compaction -----------------------------------------------------------------------------


def test_an_unknown_window_never_calls_a_user_message_too_large(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="zzz-unknown-model")
    try:
        assert session.engine.context_length == 0 and session.engine.threshold_tokens > 0
        huge = [{"role": "user", "content": "word " * (session.engine.threshold_tokens + 1000)}]
        with collecting() as warnings:
            session.before_request(huge)
    finally:
        session.close()
    assert not [w for w in warnings if w.kind == "user_message_too_large"]


class _OverflowError(Exception):
    status_code = 400


def test_a_raising_status_callback_does_not_break_the_compaction(tmp_path: Path) -> None:
    statuses: list[str] = []

    def raising(event: Any) -> None:
        statuses.append(event.kind)
        raise RuntimeError("UI bug")

    session = Session.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="gpt-4o",
                           context_length=60_000, on_status=raising)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "index the repository"}]
    for i in range(20):
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": "value = compute(x)\n" * 700},
        ]
    messages.append({"role": "user", "content": "now summarise"})
    error = _OverflowError("This model's maximum context length is 60000 tokens. However, your messages resulted in 70000 tokens.")
    try:
        retry = session.on_provider_error(error, messages)
    finally:
        session.close()
    assert retry is not None and len(retry) < len(messages)
    assert "compacted" in statuses


class _TierError(Exception):
    status_code = 429


def test_a_long_context_tier_refusal_caps_the_window_then_says_it_cannot_fit(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="gpt-4o",
                           context_length=1_000_000)
    error = _TierError("Extra usage is required for long context requests")
    try:
        with pytest.raises(ContextOverflowError, match="compression could not reduce it"):
            session.on_provider_error(error, _conversation())
        assert session.engine.context_length == 200_000
    finally:
        session.close()


def test_a_raising_tokenizer_plugin_in_strict_mode_falls_back_to_our_count(tmp_path: Path, capture_events: list[dict[str, Any]]) -> None:
    class Broken:
        @hookimpl
        def hermes_tokenizer(self, model: str) -> Any:
            raise RuntimeError("tokenizer download failed")

    host = PluginHost.create(strict=True, plugins=[(Broken(), "broken_tokenizer")])
    session = Session.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="gpt-4o", host=host)
    try:
        counter = session._loop.counter()
    finally:
        session.close()
    assert counter.method == "exact:o200k_base"
    assert any(e["event"] == "tokenizer_unavailable" for e in capture_events)

"""Compaction leases: one compaction of a session at a time, across workers and store kinds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hermes_core import ContextEngine, Session, hookimpl
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_core.lease import LeaseHeld, compaction_lease
from hermes_plugins.session_store import SQLiteSessionStore, close_connections

from locations import SUPPORT
from recall_support import history
from redis_support import redis_server

#: The lifetime of the leases these tests expect to see renewed: renewals come every third of
#: it, so a renewer thread may be scheduled up to two thirds of it late on a loaded machine.
LEASE_TTL = 1.0
#: Only a hang guard for conditions polled below.
HANG_GUARD = 30.0


def _poll(condition: Any, what: str) -> None:
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"hang guard: {what}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Any:
    if kind == "redis":
        from hermes_plugins.redis_store import RedisSessionStore

        return RedisSessionStore(request.getfixturevalue("redis_url"), key_prefix=f"lease{time.monotonic_ns()}:")
    return SQLiteSessionStore(tmp_path / "sessions.db")


def test_lease_contract(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = make_store(kind, tmp_path, request)
    assert store.acquire_lease("s", "a", 300)
    assert not store.acquire_lease("s", "b", 300)
    assert store.acquire_lease("other", "b", 300)  # per session
    assert not store.renew_lease("s", "b", 300) and store.renew_lease("s", "a", 300)
    store.release_lease("s", "b")  # not b's: stays
    assert not store.acquire_lease("s", "b", 300)
    store.release_lease("s", "a")
    assert store.acquire_lease("s", "b", 200)
    time.sleep(0.35)  # expired
    assert store.acquire_lease("s", "c", 300)
    close_connections()


def test_the_lease_is_renewed_while_the_compaction_runs(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    store = make_store(kind, tmp_path, request)
    renewals: list[bool] = []
    renew = store.renew_lease

    def counted(*args: Any) -> bool:
        renewals.append(renew(*args))
        return renewals[-1]

    store.renew_lease = counted
    # The lifetime leaves a renewal (every third of it) two thirds of a lifetime to be late on
    # two shared cores; the block then outlives the first lifetime and three renewals.
    with compaction_lease(store, "s", ttl=LEASE_TTL, wait=0):
        started = time.monotonic()
        _poll(lambda: len(renewals) >= 3 and time.monotonic() - started > 1.2 * LEASE_TTL, "renewals")
        assert all(renewals)
        assert not store.acquire_lease("s", "intruder", 300)
        with pytest.raises(LeaseHeld):
            with compaction_lease(store, "s", ttl=LEASE_TTL, wait=0.1):
                pass
    assert store.acquire_lease("s", "next", 300)  # released at the end
    close_connections()


class SlowEngine(ContextEngine):
    """Drops the middle, slowly, and records how many compactions overlap."""

    name = "slow"
    active = 0
    overlaps = 0
    runs = 0
    guard = threading.Lock()

    def has_content_to_compress(self, messages: list[dict[str, Any]]) -> bool:
        return True

    def compress(self, messages: list[dict[str, Any]], current_tokens: int | None = None,
                 focus_topic: str | None = None, force: bool = False) -> list[dict[str, Any]]:
        cls = type(self)
        with cls.guard:
            cls.active += 1
            cls.overlaps += cls.active > 1
            cls.runs += 1
        time.sleep(0.3)
        with cls.guard:
            cls.active -= 1
        return [messages[0], *messages[-4:]]


class SlowEngines:
    @hookimpl
    def hermes_context_engines(self) -> dict[str, type[ContextEngine]]:
        return {"slow": SlowEngine}


def test_two_workers_never_compact_one_session_at_once(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    SlowEngine.active = SlowEngine.overlaps = SlowEngine.runs = 0
    data: dict[str, Any] = {"context": {"engine": "slow"}, "session_store": {"lease_wait_seconds": 0.1}}
    if kind == "redis":
        data["session_store"].update(backend="redis", url=request.getfixturevalue("redis_url"),
                                     key_prefix=f"w{time.monotonic_ns()}:")
    results: list[Any] = []

    def worker() -> None:
        host = PluginHost.create()
        host.register(SlowEngines(), "slow")
        session = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="busy", host=host,
                               config=load_config(data=data))
        result = session.compress(history(10))
        results.append((result.messages, [w.kind for w in session.warnings]))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert SlowEngine.overlaps == 0
    skipped = [r for r in results if "compaction_skipped_lease_held" in r[1]]
    assert SlowEngine.runs >= 1 and len(skipped) == 4 - SlowEngine.runs
    assert all(messages == history(10) for messages, _ in skipped)  # served as they were
    close_connections()


_HOLDER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    kind, where = sys.argv[1], sys.argv[2]
    if kind == "redis":
        from hermes_plugins.redis_store import RedisSessionStore
        store = RedisSessionStore(where, key_prefix="killed:")
    else:
        from hermes_plugins.session_store import SQLiteSessionStore
        store = SQLiteSessionStore(where)
    from hermes_core.lease import compaction_lease
    with compaction_lease(store, "victim", ttl={ttl!r}, wait=0):
        print("held", flush=True)
        time.sleep(60)
    """
)


def test_a_worker_killed_mid_compaction_frees_the_session_when_its_lease_expires(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    where = request.getfixturevalue("redis_url") if kind == "redis" else str(tmp_path / "sessions.db")
    code = _HOLDER.format(tests=str(SUPPORT), ttl=LEASE_TTL)
    proc = subprocess.Popen([sys.executable, "-c", code, kind, where], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    if kind == "redis":
        from hermes_plugins.redis_store import RedisSessionStore

        store: Any = RedisSessionStore(where, key_prefix="killed:")
    else:
        store = SQLiteSessionStore(where)
    time.sleep(1.2 * LEASE_TTL)  # renewed by the holder: still held after its first lifetime
    assert not store.acquire_lease("victim", "me", 1_000)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _poll(lambda: store.acquire_lease("victim", "me", 1_000), "the killed worker's lease expiring")
    close_connections()


def status_session(kind: str, tmp_path: Path, request: pytest.FixtureRequest, events: list[Any],
                   *, url: str | None = None) -> Session:
    from recall_support import TestEngines

    data: dict[str, Any] = {"context": {"engine": "drophalf"}, "session_store": {"lease_wait_seconds": 0.1}}
    if kind == "redis":
        data["session_store"].update(backend="redis", url=url or request.getfixturevalue("redis_url"),
                                     key_prefix=f"st{time.monotonic_ns()}:")
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    return Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="held", host=host,
                        context_length=8_000, config=load_config(data=data), on_status=events.append)


def test_a_held_lease_reaches_the_host_as_a_skipped_status_event(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    events: list[Any] = []
    session = status_session(kind, tmp_path, request, events)
    assert session.store.acquire_lease("held", "another-worker", 30_000)
    messages = history(40)  # far over the 8k window: the preflight wants to compact
    assert session.before_request(messages) == messages  # served uncompacted
    skipped = [e for e in events if e.kind == "skipped"]
    assert [(e.reason, e.phase) for e in skipped] == [("lease_held", "preflight")]
    assert "another worker" in skipped[0].message and skipped[0].before_messages == len(messages)
    assert "compaction_skipped_lease_held" in {w.kind for w in session.warnings}  # kept as well
    session.store.release_lease("held", "another-worker")
    events.clear()
    out = session.before_request(messages)
    assert len(out) < len(messages) and [e.kind for e in events] == ["compacted"]
    close_connections()


def test_an_unreachable_store_still_gets_the_request_compacted_locally(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The request's correctness outranks the store (issue 32): without the lease the
    # compaction runs locally, with one warning per compaction that says so.
    import sqlite3

    from fake_llm_servers import refused_port

    def unreachable(self: Any, *args: Any) -> bool:
        raise sqlite3.OperationalError("unable to open database file")

    if kind == "sqlite":
        monkeypatch.setattr(SQLiteSessionStore, "acquire_lease", unreachable)
    events: list[Any] = []
    with refused_port() as port:  # held, so no other process's server can appear there
        url = f"redis://127.0.0.1:{port}/0"
        session = status_session(kind, tmp_path, request, events, url=url)
        messages = history(40)
        assert len(session.before_request(messages)) < len(messages)
        manual = session.compress(messages)
    assert len(manual.messages) < len(messages)
    assert [e.kind for e in events][:1] == ["compacted"] and "skipped" not in [e.kind for e in events]
    unlocked = [w for w in session.warnings if w.kind == "compaction_without_lease"]
    assert len(unlocked) == 1 and "could not be reached" in unlocked[0].message  # once per outage
    close_connections()

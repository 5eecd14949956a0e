"""Fault injection against a real redis-server (issue 32): slow, hung, reset, killed, wiped.

Each fault runs a few turns of an agent loop over a history past the window, through a TCP
proxy (tests/support/fault_proxy.py) between the Session and the server. Per fault: every request fits
(compacted locally when the store cannot be had), no turn is slower than the store budget plus
the engine's own time, and the facts archived stay findable by ``context_search``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.tokens import estimate_messages_tokens

from fault_proxy import FaultProxy
from recall_support import history
from redis_support import free_port, missing, redis_server

BUDGET = 1.0
FACTS = {3: "ModuleNotFoundError: No module named 'yaml'", 9: "PermissionError: /srv/data/cache.lock",
         15: "segfault in libfoo.so.2 at 0xdeadbeef"}
REPORT: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def _open(home: Path, url: str, sid: str) -> Session:
    config = load_config(data={
        "session_store": {"backend": "redis", "url": url, "key_prefix": f"faults-{sid}:",
                          "turn_budget_seconds": BUDGET, "lease_wait_seconds": 5},
    })
    return Session.open(cwd=home, home=home, model="gpt-4o", provider="openai", session_id=sid,
                        context_length=12_000, config=config, env={})


def _turns(session: Session, turns: int, start: int = 0, facts: dict[int, str] | None = None) -> dict[str, Any]:
    """Run ``turns`` requests over a growing history; what a host would see of each."""
    messages = history(24 + start, facts=FACTS if facts is None else facts, tool_chars=1_400)
    threshold = session.engine.threshold_tokens
    slowest, unfit = 0.0, 0
    for t in range(turns):
        messages = [*messages, {"role": "user", "content": f"turn {start + t}: go on with module_{start + t}"}]
        began = time.monotonic()
        out = session.before_request(messages)
        slowest = max(slowest, time.monotonic() - began)
        if estimate_messages_tokens(out) + len(session.system_prompt) // 4 > threshold:
            unfit += 1
        messages = [*out, {"role": "assistant", "content": f"done with turn {start + t}"}]
    return {"turns": turns, "unfit": unfit, "slowest": slowest}


def _facts_lost(session: Session, facts: dict[int, str] | None = None) -> int:
    lost = 0
    for fact in (FACTS if facts is None else facts).values():
        answer = json.loads(session.handle_tool_call("context_search", {"query": fact.split(":")[0]}))
        if fact not in json.dumps(answer, ensure_ascii=False):
            lost += 1
    return lost


def _healthy_slowest(home: Path, url: str) -> float:
    session = _open(home, url, "healthy")
    figures = _turns(session, 3)
    session.close()
    assert figures["unfit"] == 0
    return float(figures["slowest"])


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["delay", "drop", "reset"])
def test_a_faulty_store_costs_at_most_the_budget_and_never_the_fit(
    fault: str, tmp_path: Path, redis_url: str
) -> None:
    upstream = int(redis_url.rsplit(":", 1)[1].split("/")[0])
    healthy = _healthy_slowest(tmp_path / "healthy", redis_url)
    proxy = FaultProxy(upstream)
    try:
        session = _open(tmp_path, proxy.url, f"fault-{fault}")
        assert session.system_prompt
        proxy.set(fault, delay=2.5)  # 2.5 s per reply: one turn took 74 s before the budget
        figures = _turns(session, 3)
        lost = _facts_lost(session)
        session.close()
    finally:
        proxy.close()
    REPORT[fault] = {**figures, "facts_lost": lost, "healthy_slowest": healthy}
    assert figures["unfit"] == 0, REPORT[fault]
    assert lost == 0, REPORT[fault]
    # The budget covers every store call of a turn together; the rest is the engine's work.
    assert figures["slowest"] <= BUDGET + 2 * healthy + 1.5, REPORT[fault]


def _start(binary: str, port: int, workdir: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(workdir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    import redis

    client = redis.Redis(port=port, socket_connect_timeout=1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if client.ping():
                return proc
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise AssertionError("redis-server did not start")


def test_a_server_restarted_without_persistence_is_healed_in_the_same_process(tmp_path: Path) -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        missing("redis-server is not installed (.ci/run installs it)")
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    proc = _start(binary, port, tmp_path)
    try:
        first = _open(tmp_path, url, "restarted")
        before = _turns(first, 2)
        assert _facts_lost(first) == 0
        first.close()
        proc.kill()
        proc.wait(timeout=30)
        down = _open(tmp_path, url, "restarted")  # a turn while the server is down
        during = _turns(down, 1, start=2)
        down.close()
        proc = _start(binary, port, tmp_path)  # empty: no persistence
        # A gateway opens a Session per turn over histories that no longer hold the facts: what
        # this process archived before the restart and what it archives after it must be found.
        new = {5: "OSError: [Errno 122] Disk quota exceeded: /home/ci"}
        found_after = []
        for t in range(3):
            later = _open(tmp_path, url, "restarted")
            _turns(later, 1, start=3 + t, facts=new if t == 0 else {})
            found_after.append(_facts_lost(later) + _facts_lost(later, new))
            later.close()
        REPORT["restart"] = {"turns": 6, "unfit": before["unfit"] + during["unfit"],
                             "facts_lost": max(found_after), "slowest": max(before["slowest"], during["slowest"])}
        assert during["unfit"] == 0
        assert found_after == [0, 0, 0], REPORT["restart"]
    finally:
        proc.kill()
        proc.wait(timeout=30)

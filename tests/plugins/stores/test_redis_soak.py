"""Soak: worker processes serve random sessions through one Redis store.

Each turn a worker takes the session's host-side turn lock (a gateway serialises one
conversation's turns), opens a fresh ``Session`` with the session id (as a gateway worker does
per turn), replays the stored prompt, appends a turn and lets compaction run. Now and then a
worker also runs a ``/compress`` of a session it does not hold the turn lock of (an operator
command racing the conversation; its result is thrown away), so compactions of one session do
contend for its lease. One worker is SIGKILLed in the middle of a compaction (while it holds
the lease) and replaced. Every compaction records, from inside the lease, when the engine ran,
the stored compression counter it found and the engine's counter before and after.

At the end: every request's prompt was byte-identical to the session's first; every message
that ever left a transcript is in the archive with its original text; no two compactions of a
session overlapped in time; every compaction ran on the newest stored engine state and the
stored counter equals the sum of the increments observed across workers (no lost update); the
killed worker's lease expired within its TTL and its session went on.

The normal suite runs a small soak; the full one is opt-in (docs/stores.md):

    HERMES_SOAK_WORKERS=8 HERMES_SOAK_SESSIONS=200 HERMES_SOAK_TURNS=30 \\
        python -m pytest -q -p no:randomly -s tests/plugins/stores/test_redis_soak.py
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from locations import SUPPORT
from redis_support import redis_server

WORKERS = int(os.environ.get("HERMES_SOAK_WORKERS", "4"))
SESSIONS = int(os.environ.get("HERMES_SOAK_SESSIONS", "12"))
TURNS = int(os.environ.get("HERMES_SOAK_TURNS", "20"))
KILLS = int(os.environ.get("HERMES_SOAK_KILLS", "1"))
#: share of a worker's picks that are a racing /compress instead of a turn
RACE = float(os.environ.get("HERMES_SOAK_RACE", "0.1"))
LEASE_TTL = 1.0

_WORKER = textwrap.dedent(
    """
    import json, os, random, sys, time
    sys.path.insert(0, {tests!r})
    import redis
    from recall_support import call
    from hermes_core import Session
    from hermes_core.config import load_config
    from hermes_core.host import PluginHost
    from hermes_core.tokens import estimate_request_tokens
    from hermes_plugins.redis_store import RedisSessionStore

    url, worker, victim = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "victim"
    r = redis.Redis.from_url(url, decode_responses=True)
    config = load_config(data={{"session_store": {{
        "backend": "redis", "url": url, "key_prefix": "soak:",
        "lease_ttl_seconds": {lease_ttl}, "lease_wait_seconds": 0.2}}}})
    host = PluginHost.create(config=config)
    store = RedisSessionStore(url, key_prefix="soak:")
    rng = random.Random(worker)
    current = {{"sid": None}}
    compactions = 0

    original = PluginHost.engine_step

    def engine_step(self, step, engine, **kwargs):
        # Runs inside the compaction lease (CompactionLoop.run_engine): record the hold.
        global compactions
        if step != "compress":
            return original(self, step, engine, **kwargs)
        sid = current["sid"]
        found = store.get_engine_state(sid)
        stored = found[1]["compression_count"] if found else 0
        c0, t0 = engine.compression_count, time.time()
        compactions += 1
        if victim and compactions == 3:
            r.set("host:inside", json.dumps({{"sid": sid, "pid": os.getpid(), "worker": worker}}))
            time.sleep(120)  # SIGKILLed here, holding the lease (renewed by its thread)
        out = original(self, step, engine, **kwargs)
        r.rpush("host:holds", json.dumps({{
            "sid": sid, "worker": worker, "t0": t0, "t1": time.time(), "stored": stored,
            "c0": c0, "c1": engine.compression_count, "changed": out is not kwargs["messages"]}}))
        return out

    PluginHost.engine_step = engine_step

    def status(event):
        if event.kind == "skipped":
            r.incr(f"host:skipped:{{event.reason}}")

    def turn(sid, t):
        body = f"output {{sid}} turn {{t}} token_{{sid}}_{{t}}_result " + " ".join(f"w{{i}}" for i in range(300))
        return [
            {{"role": "user", "content": f"{{sid}} step {{t}} token_{{sid}}_{{t}}_ask"}},
            {{"role": "assistant", "content": "", "tool_calls": [call(f"c{{t}}", "terminal", '{{"command": "make"}}')]}},
            {{"role": "tool", "tool_call_id": f"c{{t}}", "content": body}},
            {{"role": "assistant", "content": f"done {{sid}} {{t}}"}},
        ]

    def open_session(sid):
        current["sid"] = sid
        return Session.open(cwd=".", home=".", model="m", session_id=sid, context_length=8_000,
                            host=host, config=config, on_status=status)

    while int(r.get("host:done") or 0) < {sessions}:
        sid = f"s{{rng.randrange({sessions})}}"
        if rng.random() < {race}:
            stored = r.get(f"host:transcript:{{sid}}")
            if stored:
                open_session(sid).compress(json.loads(stored))  # races the turns; thrown away
                r.incr("host:races")
            continue
        if not r.set(f"host:lock:{{sid}}", worker, nx=True, px=60_000):
            continue
        try:
            t = int(r.get(f"host:turns:{{sid}}") or 0)
            if t >= {turns}:
                continue
            messages = json.loads(r.get(f"host:transcript:{{sid}}") or "[]")
            session = open_session(sid)
            prompt = session.system_prompt
            r.set(f"host:first:{{sid}}", prompt, nx=True)
            if prompt != r.get(f"host:first:{{sid}}"):
                r.rpush("host:errors", f"{{sid}} turn {{t}}: prompt differs")
            before = messages + turn(sid, t)
            out = session.before_request(before)
            usage = {{"prompt_tokens": estimate_request_tokens(out, system_prompt=prompt)}}
            out = session.after_response(usage, out)
            if out is not before:
                r.incr(f"host:compactions:{{sid}}")
            session.close(out)
            r.set(f"host:transcript:{{sid}}", json.dumps(out))
            r.set(f"host:turns:{{sid}}", t + 1)
            r.incr("host:requests")
            if t + 1 == {turns}:
                r.incr("host:done")
        finally:
            r.delete(f"host:lock:{{sid}}")
    """
)


def overlaps(holds: list[dict[str, Any]]) -> int:
    """Pairs of consecutive compactions of one session whose engine runs overlapped in time."""
    found = 0
    by_sid: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for h in holds:
        by_sid[h["sid"]].append(h)
    for runs in by_sid.values():
        runs.sort(key=lambda h: h["t0"])
        found += sum(later["t0"] < earlier["t1"] for earlier, later in zip(runs, runs[1:]))
    return found


def test_the_overlap_check_sees_an_overlap() -> None:
    runs = [{"sid": "a", "t0": 0.0, "t1": 2.0}, {"sid": "a", "t0": 1.0, "t1": 3.0}, {"sid": "b", "t0": 1.5, "t1": 4.0}]
    assert overlaps(runs) == 1 and overlaps(runs[::2]) == 0


@pytest.mark.slow
def test_workers_share_sessions_through_redis(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        import redis

        from hermes_plugins.redis_store import RedisSessionStore

        started = time.monotonic()
        code = _WORKER.format(tests=str(SUPPORT), sessions=SESSIONS, turns=TURNS,
                              race=RACE, lease_ttl=LEASE_TTL)
        env = {**os.environ, "HERMES_HOME": str(tmp_path)}
        r = redis.Redis.from_url(url, decode_responses=True)

        def spawn(w: int, victim: bool) -> subprocess.Popen[bytes]:
            return subprocess.Popen([sys.executable, "-c", code, url, str(w), "victim" if victim else "-"],
                                    cwd=tmp_path, env=env)

        procs = {w: spawn(w, w == 0 and KILLS > 0) for w in range(WORKERS)}
        kills: list[dict[str, Any]] = []
        deadline = time.monotonic() + 3600
        while any(p.poll() is None for p in procs.values()):
            assert time.monotonic() < deadline, "the soak did not finish"
            inside = r.get("host:inside")
            if inside is None:
                time.sleep(0.05)
                continue
            victim = json.loads(inside)
            lease = f"soak:lease:{victim['sid']}"
            token = r.get(lease)
            time.sleep(LEASE_TTL)  # it holds the lease past one lifetime (renewed)...
            assert token is not None and r.get(lease) == token
            os.kill(victim["pid"], signal.SIGKILL)  # ...and dies mid-compaction
            procs[victim["worker"]].wait()
            killed = time.monotonic()
            while r.get(lease) == token:
                assert time.monotonic() - killed < LEASE_TTL + 1, "the killed worker's lease never expired"
                time.sleep(0.01)
            kills.append({**victim, "lease_gone_after": round(time.monotonic() - killed, 2)})
            r.delete("host:inside")
            if r.get(f"host:lock:{victim['sid']}") == str(victim["worker"]):
                r.delete(f"host:lock:{victim['sid']}")  # the supervisor frees its conversation
            replacement = max(procs) + 1
            procs[replacement] = spawn(replacement, len(kills) < KILLS)
        for w, p in procs.items():
            assert p.wait() in (0, -signal.SIGKILL), f"worker {w} failed"
        elapsed = time.monotonic() - started
        assert r.lrange("host:errors", 0, -1) == []
        store = RedisSessionStore(url, key_prefix="soak:")
        holds = [json.loads(h) for h in r.lrange("host:holds", 0, -1)]
        by_sid: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for h in holds:
            by_sid[h["sid"]].append(h)
        lost_facts, lost_updates, compacted = [], 0, 0
        for i in range(SESSIONS):
            sid = f"s{i}"
            assert int(r.get(f"host:turns:{sid}") or 0) == TURNS
            live = json.dumps(json.loads(r.get(f"host:transcript:{sid}")))
            compacted += int(r.get(f"host:compactions:{sid}") or 0)
            runs = sorted(by_sid[sid], key=lambda h: h["t0"])
            # every compaction ran on the newest stored state, and stored every increment
            lost_updates += sum(h["c0"] != h["stored"] for h in runs)
            found = store.get_engine_state(sid)
            stored = found[1]["compression_count"] if found else 0
            assert stored == sum(h["c1"] - h["c0"] for h in runs), f"{sid}: a counter update was lost"
            for t in range(TURNS):
                for key in (f"token_{sid}_{t}_result", f"token_{sid}_{t}_ask"):
                    if key in live:
                        continue
                    hits = store.archive_search(sid, key, 5)
                    if not any(key in h["text"] for h in hits):
                        lost_facts.append(key)
        figures = {
            "workers": WORKERS, "sessions": SESSIONS, "turns": TURNS, "seconds": round(elapsed, 1),
            "requests": int(r.get("host:requests") or 0), "racing_compresses": int(r.get("host:races") or 0),
            "compactions_in_turns": compacted, "engine_runs": len(holds),
            "counter_increments": sum(h["c1"] - h["c0"] for h in holds),
            "skipped_lease_held": int(r.get("host:skipped:lease_held") or 0),
            "overlaps": overlaps(holds), "lost_updates": lost_updates, "lost_facts": len(lost_facts),
            "kills": kills,
        }
        sys.stderr.write(f"soak figures: {json.dumps(figures)}\n")
        assert figures["requests"] == SESSIONS * TURNS
        assert figures["overlaps"] == 0 and lost_updates == 0 and lost_facts == []
        assert len(kills) == KILLS
        compacted_sessions = sum(any(h["c1"] > h["c0"] for h in by_sid[f"s{i}"]) for i in range(SESSIONS))
        assert compacted > 0 and compacted_sessions >= SESSIONS // 2  # the checks above had work to do

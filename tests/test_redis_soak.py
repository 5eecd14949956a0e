"""Soak (scaled down): worker processes serve random sessions through one Redis store.

Each turn a worker takes the session's host-side turn lock (a gateway serialises one
conversation's turns), opens a fresh ``Session`` with the session id (as a gateway worker does
per turn), replays the stored prompt, appends a turn and lets compaction run. At the end: every
request's prompt was byte-identical to the session's first, every message that ever left the
transcript is in the archive with its original text, and the stored engine state counted every
compaction (no update lost between workers).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from redis_support import redis_server

WORKERS, SESSIONS, TURNS = 4, 12, 16

_WORKER = textwrap.dedent(
    """
    import json, random, sys, time
    sys.path.insert(0, {tests!r})
    import redis
    from recall_support import call
    from hermes_core import Session
    from hermes_core.config import load_config
    from hermes_core.host import PluginHost
    from hermes_core.tokens import estimate_request_tokens

    url, worker = sys.argv[1], int(sys.argv[2])
    r = redis.Redis.from_url(url, decode_responses=True)
    config = load_config(data={{"session_store": {{"backend": "redis", "url": url, "key_prefix": "soak:"}}}})
    host = PluginHost.create(config=config)
    rng = random.Random(worker)

    def turn(sid, t):
        body = f"output {{sid}} turn {{t}} token_{{sid}}_{{t}}_result " + " ".join(f"w{{i}}" for i in range(300))
        return [
            {{"role": "user", "content": f"{{sid}} step {{t}} token_{{sid}}_{{t}}_ask"}},
            {{"role": "assistant", "content": "", "tool_calls": [call(f"c{{t}}", "terminal", '{{"command": "make"}}')]}},
            {{"role": "tool", "tool_call_id": f"c{{t}}", "content": body}},
            {{"role": "assistant", "content": f"done {{sid}} {{t}}"}},
        ]

    while True:
        sid = f"s{{rng.randrange({sessions})}}"
        if not r.set(f"host:lock:{{sid}}", worker, nx=True, px=30_000):
            continue
        try:
            t = int(r.get(f"host:turns:{{sid}}") or 0)
            if t >= {turns}:
                if all(int(r.get(f"host:turns:s{{i}}") or 0) >= {turns} for i in range({sessions})):
                    break
                continue
            messages = json.loads(r.get(f"host:transcript:{{sid}}") or "[]")
            session = Session.open(cwd=".", home=".", model="m", session_id=sid, context_length=8_000,
                                   host=host, config=config)
            prompt = session.system_prompt
            first = r.set(f"host:first:{{sid}}", prompt, nx=True) or r.get(f"host:first:{{sid}}")
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
        finally:
            r.delete(f"host:lock:{{sid}}")
    """
)


def test_workers_share_sessions_through_redis(tmp_path: Path) -> None:
    with redis_server(tmp_path) as url:
        import redis

        from hermes_plugins.redis_store import RedisSessionStore

        code = _WORKER.format(tests=str(Path(__file__).parent), sessions=SESSIONS, turns=TURNS)
        env = {**os.environ, "HERMES_HOME": str(tmp_path)}
        procs = [subprocess.Popen([sys.executable, "-c", code, url, str(w)], cwd=tmp_path, env=env)
                 for w in range(WORKERS)]
        for p in procs:
            assert p.wait(timeout=600) == 0
        r = redis.Redis.from_url(url, decode_responses=True)
        assert r.lrange("host:errors", 0, -1) == []
        store = RedisSessionStore(url, key_prefix="soak:")
        compacted = 0
        for i in range(SESSIONS):
            sid = f"s{i}"
            live = json.dumps(json.loads(r.get(f"host:transcript:{sid}")))
            count = int(r.get(f"host:compactions:{sid}") or 0)
            compacted += count
            state = store.get_engine_state(sid)
            assert state is not None and state[1]["compression_count"] >= count > 0
            for t in range(TURNS):
                for key in (f"token_{sid}_{t}_result", f"token_{sid}_{t}_ask"):
                    if key in live:
                        continue
                    hits = store.archive_search(sid, key, 5)
                    assert any(key in h["text"] for h in hits), f"{sid}: {key} lost"
        assert compacted >= SESSIONS

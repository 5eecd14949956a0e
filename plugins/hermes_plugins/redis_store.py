"""Built-in plugin ``redis_store``: the session store in Redis, for many workers on many machines.

Selected by ``session_store.backend: redis`` (install ``hermes-core[redis]``: the official
``redis`` client); ``session_store.url``, ``session_store.key_prefix`` and
``session_store.ttl_seconds`` (a session's keys expire this long after its last write) apply.
Per session it keeps the built prompt with its stable-prefix split and the archive, under
``<prefix>prompt:<id>`` (hash), ``<prefix>archive:<id>:rows`` (hash ref -> JSON entry),
``<prefix>archive:<id>:order`` (sorted set of refs by sequence) and ``<prefix>archive:<id>:stats``
(counts and bytes), with ``<prefix>archive:sessions`` listing the sessions that have one.

An archive batch is written by one Lua script (each entry at most once, counters with it), so
two workers archiving the same session never double-count or half-write. Search is an
in-process FTS5 index (``hermes_plugins.archive.search.ArchiveIndex``, SQLite in memory, BM25) over the
session's entries, loaded once
and then topped up with the entries added since (by sequence), so a query costs the new entries
plus the ranking; plain Redis has no full-text search, and Redis' search module is not there on
a stock server.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from hermes_core.plugin import ConfigSection, get_logger, hookimpl, record_warning
from hermes_plugins._common.archive_settings import ARCHIVE
from hermes_plugins.archive.search import ArchiveIndex, query_words
from hermes_plugins.store_settings import REDIS, STORE_BACKEND

log = get_logger(__name__)

#: Entries per Lua call when archiving (bounded script time: other clients wait on it).
PUT_BATCH = 500
#: Text this process keeps of what it archived, to write it again when Redis loses it (a wipe,
#: a restart without persistence); the oldest batches go first past it.
RETAIN_BYTES = 64 << 20

_PUT_SCRIPT = """
local rows, order, stats, sessions = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local sid, now, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local added = 0
for i = 4, #ARGV, 5 do
  local ref, seq, entry, size, turn = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4]
  if redis.call('HSETNX', rows, ref, entry) == 1 then
    redis.call('ZADD', order, seq, ref)
    redis.call('HINCRBY', stats, 'count', 1)
    redis.call('HINCRBY', stats, 'bytes', size)
    redis.call('HINCRBY', stats, 'turns', turn)
    if tonumber(seq) > tonumber(redis.call('HGET', stats, 'max_seq') or '0') then
      redis.call('HSET', stats, 'max_seq', seq)
    end
    added = added + 1
  end
end
if added > 0 then
  redis.call('HSETNX', stats, 'first', now)
  redis.call('HSET', stats, 'last', now)
  redis.call('SADD', sessions, sid)
end
if ttl and ttl > 0 then
  redis.call('EXPIRE', rows, ttl)
  redis.call('EXPIRE', order, ttl)
  redis.call('EXPIRE', stats, ttl)
end
return added
"""

_RENEW_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""

_RELEASE_SCRIPT = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

_REMOVE_SCRIPT = """
local rows, order, stats = KEYS[1], KEYS[2], KEYS[3]
local removed = 0
for i = 1, #ARGV do
  local entry = redis.call('HGET', rows, ARGV[i])
  if entry then
    local data = cjson.decode(entry)
    redis.call('HDEL', rows, ARGV[i])
    redis.call('ZREM', order, ARGV[i])
    redis.call('HINCRBY', stats, 'count', -1)
    redis.call('HINCRBY', stats, 'bytes', -(data['bytes'] or 0))
    if data['turn_start'] then redis.call('HINCRBY', stats, 'turns', -1) end
    removed = removed + 1
  end
end
return removed
"""


class _Shared:
    """What every store object of one process and URL shares: the client (its connection
    pool), the registered scripts and the search indexes."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.put = client.register_script(_PUT_SCRIPT)
        self.remove = client.register_script(_REMOVE_SCRIPT)
        self.renew = client.register_script(_RENEW_SCRIPT)
        self.release = client.register_script(_RELEASE_SCRIPT)
        self.indexes: dict[str, dict[str, tuple[ArchiveIndex, float]]] = {}
        self.lock = threading.Lock()
        # Per (key prefix, session): the epoch token this process last saw in Redis (a missing
        # or different one means the server lost the archive: a wipe, a restart without
        # persistence), and the batches this process archived, to write them again then.
        self.epochs: dict[tuple[str, str], str] = {}
        self.written: dict[tuple[str, str], list[Sequence[Mapping[str, Any]]]] = {}
        self.written_bytes = 0


# A connection pool per (process, URL), shared by every host's stores: process-wide on purpose
# (a host adds no reason for a second pool to the same server); keyed by pid so a forked child
# never uses its parent's sockets.
_clients: dict[tuple[int, str], _Shared] = {}
_clients_lock = threading.Lock()


def _shared(url: str) -> _Shared:
    import redis

    key = (os.getpid(), url)  # a forked child opens its own connections
    with _clients_lock:
        shared = _clients.get(key)
        if shared is None:
            client = redis.Redis.from_url(
                url, decode_responses=True, encoding_errors="surrogatepass", socket_timeout=10,
                socket_connect_timeout=5, health_check_interval=30,
            )
            shared = _clients[key] = _Shared(client)
        return shared


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class RedisSessionStore:
    """The session-store contract (prompts and archive) over one Redis database."""

    #: Its calls wait on a network: the Session bounds them by a per-turn budget
    #: (``hermes_core.store_guard``, ``session_store.turn_budget_seconds``).
    remote = True

    def __init__(self, url: str, *, key_prefix: str = "hermes:", ttl_seconds: int | None = None,
                 archive_max_bytes: int | None = None, client: Any = None) -> None:
        self.url = url
        self.prefix = key_prefix
        self.ttl = ttl_seconds
        self.archive_max_bytes = archive_max_bytes
        shared = _shared(url) if client is None else None
        self.client = client or shared.client  # type: ignore[union-attr]
        scripts = shared or _Shared(self.client)
        self._shared = scripts
        self._put, self._remove = scripts.put, scripts.remove
        self._renew, self._release = scripts.renew, scripts.release
        # Search indexes are per process and key prefix, not per store object (one per Session).
        self._indexes = scripts.indexes.setdefault(key_prefix, {})
        self._lock = scripts.lock
        self._static: tuple[str, int | None] | None = None

    @property
    def label(self) -> str:
        """The server, for messages: its URL without credentials."""
        return _without_credentials(self.url)

    # -- keys

    def _prompt_key(self, sid: str) -> str:
        return f"{self.prefix}prompt:{sid}"

    def _keys(self, sid: str) -> tuple[str, str, str]:
        base = f"{self.prefix}archive:{sid}"
        return f"{base}:rows", f"{base}:order", f"{base}:stats"

    @property
    def _sessions_key(self) -> str:
        return f"{self.prefix}archive:sessions"

    # -- prompts

    def get_prompt(self, session_id: str) -> str | None:
        # One round trip for both: a replay reads the split right after the prompt.
        prompt, prefix = self.client.hmget(self._prompt_key(session_id), ["system_prompt", "static_prefix"])
        self._static = (session_id, int(prefix) if isinstance(prefix, str) and prefix.isdigit() else None)
        return prompt if isinstance(prompt, str) else None

    def put_prompt(
        self, session_id: str, prompt: str, *, model: str = "", provider: str = "",
        static_prefix: int | None = None,
    ) -> None:
        key = self._prompt_key(session_id)
        mapping = {"system_prompt": prompt, "model": model or "", "provider": provider or "",
                   "updated_at": repr(time.time()), "static_prefix": "" if static_prefix is None else str(static_prefix)}
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping=mapping)
        if self.ttl:
            pipe.expire(key, self.ttl)
        pipe.execute()

    def get_static_prefix(self, session_id: str) -> int | None:
        known, self._static = self._static, None
        if known is not None and known[0] == session_id:
            return known[1]
        value = self.client.hget(self._prompt_key(session_id), "static_prefix")
        return int(value) if isinstance(value, str) and value.isdigit() else None

    def session_prompts(self) -> list[dict[str, Any]]:
        """Every stored prompt's session (``hermes-ctx sessions``)."""
        start = len(self._prompt_key(""))
        keys = sorted(self.client.scan_iter(match=self._prompt_key("*"), count=1_000))
        pipe = self.client.pipeline(transaction=False)
        for key in keys:
            pipe.hmget(key, ["model", "provider", "updated_at"])
            pipe.hstrlen(key, "system_prompt")
        answers = pipe.execute()
        out = []
        for i, key in enumerate(keys):
            (model, provider, updated), chars = answers[2 * i], answers[2 * i + 1]
            out.append({"session_id": key[start:], "model": model or "", "provider": provider or "",
                        "updated_at": float(updated) if updated else None, "chars": int(chars or 0)})
        return out

    def delete_prompt(self, session_id: str) -> bool:
        return bool(self.client.delete(self._prompt_key(session_id)))

    # -- compaction leases (hermes_core.lease): SET NX PX, compare-and-pexpire, compare-and-delete

    def _lease_key(self, sid: str) -> str:
        return f"{self.prefix}lease:{sid}"

    def acquire_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        return bool(self.client.set(self._lease_key(session_id), token, nx=True, px=ttl_ms))

    def renew_lease(self, session_id: str, token: str, ttl_ms: int) -> bool:
        return bool(self._renew(keys=[self._lease_key(session_id)], args=[token, ttl_ms]))

    def release_lease(self, session_id: str, token: str) -> None:
        self._release(keys=[self._lease_key(session_id)], args=[token])

    # -- engine state (ContextEngine.export_state)

    def put_engine_state(self, session_id: str, engine: str, state: Mapping[str, Any]) -> None:
        key = f"{self.prefix}engine:{session_id}"
        pipe = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping={"engine": engine, "state": json.dumps(state, ensure_ascii=False, default=str)})
        if self.ttl:
            pipe.expire(key, self.ttl)
        pipe.execute()

    def get_engine_state(self, session_id: str) -> tuple[str, dict[str, Any]] | None:
        engine, state = self.client.hmget(f"{self.prefix}engine:{session_id}", ["engine", "state"])
        return None if not engine or not state else (engine, json.loads(state))

    # -- archive

    def _epoch_key(self, sid: str) -> str:
        return f"{self.prefix}archive:{sid}:epoch"

    def _lost(self, session_id: str) -> bool:
        """Whether Redis lost this session's archive since this process last looked (its
        epoch key is gone or was made anew); the first look in a process takes the epoch."""
        key = self._epoch_key(session_id)
        current = self.client.get(key)
        if current is None:
            self.client.set(key, secrets.token_hex(8), nx=True, ex=self.ttl or None)
            current = self.client.get(key)
        with self._lock:
            seen = self._shared.epochs.get((self.prefix, session_id))
            self._shared.epochs[(self.prefix, session_id)] = current
        return seen is not None and seen != current

    def _heal(self, session_id: str) -> None:
        """After a loss: the search index is rebuilt from what Redis holds, and what this
        process archived is written again (``HSETNX``: entries still there stay as they are)."""
        with self._lock:
            self._indexes.pop(session_id, None)
            batches = list(self._shared.written.get((self.prefix, session_id), ()))
        for batch in batches:
            self._write(session_id, batch)
        record_warning(
            "archive_store_rebuilt",
            f"Redis at {self.label} lost the archive of session {session_id} (a wipe or a restart "
            f"without persistence); {len(batches)} batch(es) this process archived were written "
            "again and the search index rebuilt",
            session_id=session_id,
        )

    def _retain(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        size = sum(len(r["text"]) for r in records)
        with self._lock:
            shared = self._shared
            shared.written.setdefault((self.prefix, session_id), []).append(records)
            shared.written_bytes += size
            while shared.written_bytes > RETAIN_BYTES and shared.written:
                # The oldest batch of the session holding the most goes first.
                key = max(shared.written, key=lambda k: len(shared.written[k]))
                dropped = shared.written[key].pop(0)
                shared.written_bytes -= sum(len(r["text"]) for r in dropped)
                if not shared.written[key]:
                    del shared.written[key]

    def archive_put(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        if self._lost(session_id):
            self._heal(session_id)
        self._write(session_id, records)
        self._retain(session_id, records)
        if self.archive_max_bytes is not None:
            removed = self.archive_prune(max_bytes_per_session=self.archive_max_bytes, session_id=session_id)["removed"]
            if removed:
                log.warning("archive_retention_applied", session=session_id, removed=removed,
                            max_bytes_per_session=self.archive_max_bytes, store="redis")

    def _write(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        keys = [*self._keys(session_id), self._sessions_key]
        now = repr(time.time())
        for start in range(0, len(records), PUT_BATCH):
            args: list[Any] = [session_id, now, self.ttl or 0]
            for r in records[start:start + PUT_BATCH]:
                text = r["text"]
                size = len(text.encode("utf-8", "surrogatepass"))
                entry = {
                    "ref": r["ref"], "seq": r.get("seq", 0), "role": r.get("role", ""),
                    "tool": r.get("tool", ""), "call_id": r.get("call_id", ""), "turn": r.get("turn", 0),
                    "position": r.get("position", 0), "replaced_by": r.get("replaced_by", -1),
                    "created_at": r.get("created_at") or time.time(), "bytes": size,
                    "turn_start": bool(r.get("turn_start")), "extra": r.get("extra") or {}, "text": text,
                }
                args += [r["ref"], r.get("seq", 0), json.dumps(entry, ensure_ascii=False, default=str),
                         size, 1 if r.get("turn_start") else 0]
            self._put(keys=keys, args=args)
        if self.ttl:
            self.client.expire(self._epoch_key(session_id), self.ttl)  # lives as long as the rows

    def archive_flush(self) -> None:
        return None

    def archive_get(self, session_id: str, ref: str) -> dict[str, Any] | None:
        raw = self.client.hget(self._keys(session_id)[0], ref)
        return _entry(raw) if raw else None

    def archive_refs(self, session_id: str) -> set[str]:
        # A Session reads these first: a loss is healed before it numbers new references, so
        # what is written again and what it archives next never share a reference.
        if self._lost(session_id):
            self._heal(session_id)
        return set(self.client.hkeys(self._keys(session_id)[0]))

    def archive_stats(self, session_id: str) -> dict[str, Any]:
        if self._lost(session_id):
            self._heal(session_id)
        raw = self.client.hgetall(self._keys(session_id)[2])
        return _stats(session_id, raw)

    def archive_sessions(self) -> list[dict[str, Any]]:
        ids = sorted(self.client.smembers(self._sessions_key))
        if not ids:
            return []
        pipe = self.client.pipeline(transaction=False)
        for sid in ids:
            pipe.hgetall(self._keys(sid)[2])
        out = []
        for sid, raw in zip(ids, pipe.execute(), strict=True):
            stats = _stats(sid, raw)
            if stats["count"]:
                out.append(stats)
        return out

    def _index(self, session_id: str) -> ArchiveIndex:
        rows_key, order_key, _stats_key = self._keys(session_id)
        if self._lost(session_id):
            self._heal(session_id)
        with self._lock:
            index, last = self._indexes.get(session_id, (ArchiveIndex(), -1.0))
            new = self.client.zrangebyscore(order_key, f"({last}" if last >= 0 else "-inf", "+inf", withscores=True)
            for start in range(0, len(new), 1_000):
                chunk = new[start:start + 1_000]
                raws = self.client.hmget(rows_key, [ref for ref, _score in chunk])
                for (ref, score), raw in zip(chunk, raws, strict=True):
                    if raw:
                        index.add((score, ref), json.loads(raw)["text"])
                    last = max(last, score)
            self._indexes[session_id] = (index, last)
            return index

    def archive_search(self, session_id: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        words = query_words(query)
        limit = max(1, int(limit))
        index = self._index(session_id)
        rows_key = self._keys(session_id)[0]
        out: list[dict[str, Any]] = []
        while True:
            keys = index.search(words, limit + 8)
            raws = self.client.hmget(rows_key, [ref for _seq, ref in keys]) if keys else []
            gone = [key for key, raw in zip(keys, raws, strict=True) if not raw]
            if not gone:
                out = [_entry(raw) for raw in raws]
                break
            with self._lock:  # pruned by another process since we loaded them
                for key in gone:
                    index.remove(key)
        return out[:limit]

    def archive_prune(
        self, *, max_age_days: float | None = None, max_bytes_per_session: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, int]:
        sessions = [session_id] if session_id is not None else sorted(self.client.smembers(self._sessions_key))
        cutoff = time.time() - float(max_age_days) * 86_400 if max_age_days is not None else None
        removed = 0
        for sid in sessions:
            rows_key, order_key, stats_key = self._keys(sid)
            total = int(self.client.hget(stats_key, "bytes") or 0)
            if cutoff is None and (max_bytes_per_session is None or total <= max_bytes_per_session):
                continue
            doomed: list[str] = []
            refs = self.client.zrange(order_key, 0, -1)
            for start in range(0, len(refs), 1_000):
                chunk = refs[start:start + 1_000]
                for ref, raw in zip(chunk, self.client.hmget(rows_key, chunk), strict=True):
                    if not raw:
                        continue
                    entry = json.loads(raw)
                    old = cutoff is not None and float(entry.get("created_at") or 0) < cutoff
                    over = max_bytes_per_session is not None and total > max_bytes_per_session
                    if old or over:
                        doomed.append(ref)
                        total -= int(entry.get("bytes") or 0)
                    elif cutoff is None:
                        break
            for start in range(0, len(doomed), PUT_BATCH):
                removed += int(self._remove(keys=[rows_key, order_key, stats_key], args=doomed[start:start + PUT_BATCH]))
        return {"removed": removed}

    def archive_delete(self, session_id: str) -> int:
        rows_key, order_key, stats_key = self._keys(session_id)
        count = int(self.client.hlen(rows_key))
        pipe = self.client.pipeline(transaction=True)
        pipe.delete(rows_key, order_key, stats_key)
        pipe.srem(self._sessions_key, session_id)
        pipe.execute()
        with self._lock:
            self._indexes.pop(session_id, None)
            self._shared.epochs.pop((self.prefix, session_id), None)
            dropped = self._shared.written.pop((self.prefix, session_id), [])
            self._shared.written_bytes -= sum(len(r["text"]) for batch in dropped for r in batch)
        self.client.delete(self._epoch_key(session_id))
        return count

    def __repr__(self) -> str:
        return f"RedisSessionStore({self.label!r}, key_prefix={self.prefix!r})"  # no credentials


def _entry(raw: str) -> dict[str, Any]:
    entry = json.loads(raw)
    if not isinstance(entry, dict):  # the store guard reports it as a StoreError naming the store
        raise ValueError(f"an archive row holds a JSON {type(entry).__name__}, not an object")
    entry.setdefault("extra", {})
    return entry


def _stats(session_id: str, raw: Mapping[str, str]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "count": int(raw.get("count") or 0),
        "bytes": int(raw.get("bytes") or 0),
        "turns": int(raw.get("turns") or 0),
        "first": float(raw["first"]) if raw.get("first") else None,
        "last": float(raw["last"]) if raw.get("last") else None,
        # Kept through prunes (the remove script leaves it): the sequence continues after it.
        "max_seq": int(float(raw.get("max_seq") or 0)),
    }


@hookimpl
def hermes_config_sections() -> ConfigSection[Any]:
    return REDIS


@hookimpl(trylast=True)
def hermes_session_store(home: Any, config: Any) -> RedisSessionStore | None:
    if config.section(STORE_BACKEND).backend != "redis":
        return None
    section = config.section(REDIS)
    try:
        return RedisSessionStore(
            section.url, key_prefix=section.key_prefix, ttl_seconds=section.ttl_seconds,
            archive_max_bytes=config.section(ARCHIVE).max_bytes_per_session,
        )
    except ImportError:
        record_warning(
            "session_store_unavailable",
            "session_store.backend is redis but the redis client is not installed "
            "(pip install 'hermes-core[redis]'); using the local SQLite store",
            plugin="redis_store",
        )
        return None

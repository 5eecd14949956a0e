"""The session store's plugin-owned keys, added to the core's ``session_store`` section: which
store answers (``backend``, the SQLite ``session_store`` plugin's) and where Redis is (the
``redis_store`` plugin's). The lease and per-turn budget keys stay the core's: the Session reads
them whatever the store."""

from __future__ import annotations

import attrs

from hermes_core.plugin import ConfigSection, field, integer, string


@attrs.frozen(kw_only=True)
class StoreBackendSettings:
    backend: str = field("sqlite", string(choices=("sqlite", "redis")), doc="sqlite (HERMES_HOME) or redis")


@attrs.frozen(kw_only=True)
class RedisSettings:
    url: str = field("redis://127.0.0.1:6379/0", string(), doc="the Redis server (backend: redis)")
    key_prefix: str = field("hermes:", string(), doc="prefix of every Redis key")
    ttl_seconds: int | None = field(
        None, integer(1, optional=True), doc="Redis keys of a session expire this long after its last write"
    )


STORE_BACKEND = ConfigSection(name="session_store", model=StoreBackendSettings, doc="Which session store answers.")
REDIS = ConfigSection(name="session_store", model=RedisSettings, doc="The Redis session store.")

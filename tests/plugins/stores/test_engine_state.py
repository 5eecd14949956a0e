"""Engine state outlives the process: blocks, cooldowns, counters and the summary to update."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.session_store import close_connections

from recall_support import history
from redis_support import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def config(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    data: dict[str, Any] = {}
    if request.param == "redis":
        data["session_store"] = {"backend": "redis", "url": request.getfixturevalue("redis_url"),
                                 "key_prefix": f"{tmp_path.name}:"}
    yield load_config(data=data)
    close_connections()


def open_session(tmp_path: Path, config: Any) -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=64_000, session_id="kept",
                        host=PluginHost.create(), config=config)


def test_a_new_process_keeps_blocks_cooldowns_and_the_summary(tmp_path: Path, config: Any) -> None:
    first = open_session(tmp_path, config)
    first.compress(history(40, tool_chars=3_000))
    engine = first.engine
    assert engine.compression_count == 1
    engine._guard.ineffective_count = 2
    engine._guard.block_base_tokens = 12_345
    engine._guard.cooldown_until = engine.clock() + 300
    engine._guard.last_failure = "timeout"
    first.save_engine_state()
    second = open_session(tmp_path, config)  # another worker, same session id
    restored = second.engine
    assert restored.compression_count == 1
    assert restored._guard.ineffective_count == 2 and restored._guard.block_base_tokens == 12_345
    assert 290 < restored._guard.cooldown_until - restored.clock() <= 300
    assert restored._guard.last_failure == "timeout"
    assert restored._previous_summary == engine._previous_summary and restored._previous_summary
    assert restored.should_compress_info(60_000)[0] is False  # still blocked here too


def test_every_compaction_attempt_stores_the_state(tmp_path: Path, config: Any) -> None:
    session = open_session(tmp_path, config)
    session.compress(history(40, tool_chars=3_000))
    found = session.store.get_engine_state("kept")
    assert found is not None and found[0] == "compressor" and found[1]["compression_count"] == 1


def test_a_fresh_session_id_starts_fresh(tmp_path: Path, config: Any) -> None:
    open_session(tmp_path, config).compress(history(40, tool_chars=3_000))
    other = Session.open(cwd=tmp_path, home=tmp_path, model="m", session_id="other", host=PluginHost.create(),
                         config=config)
    assert other.engine.compression_count == 0


def test_a_worker_opened_before_another_ones_compaction_loses_no_update(tmp_path: Path, config: Any) -> None:
    early = open_session(tmp_path, config)  # both workers hold the session open
    late = open_session(tmp_path, config)
    late.compress(history(40, tool_chars=3_000))
    early.compress(history(40, tool_chars=3_000))  # its state was read before late's compaction
    found = early.store.get_engine_state("kept")
    assert found is not None and found[1]["compression_count"] == 2
    assert early.engine.compression_count == 2


def test_a_workers_own_state_is_not_reread_over_newer_in_memory_state(tmp_path: Path, config: Any) -> None:
    session = open_session(tmp_path, config)
    session.compress(history(40, tool_chars=3_000))
    session.engine.compression_count = 7  # changed here since it was stored; nobody else wrote
    session.compress(history(40, tool_chars=3_000))
    assert session.engine.compression_count == 8

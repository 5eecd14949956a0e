"""The Redis session store through the Session: replayed prompts, the archive, lost connections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.host import PluginHost
from hermes_plugins.archive.plugin import archive_of

from fake_llm_servers import refused_port
from recall_support import TestEngines, history
from redis_support import redis_server


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def open_session(home: Path, url: str, sid: str, prefix: str = "it:") -> Session:
    host = PluginHost.create()
    host.register(TestEngines(), "test_engines")
    config = load_config(data={"context": {"engine": "drophalf"},
                               "session_store": {"backend": "redis", "url": url, "key_prefix": prefix}})
    return Session.open(cwd=home, home=home, model="m", session_id=sid, host=host, config=config)


def test_prompt_and_archive_live_in_redis_for_every_worker(tmp_path: Path, redis_url: str) -> None:
    first = open_session(tmp_path / "a", redis_url, "shared")
    assert type(first.store.wrapped).__name__ == "RedisSessionStore"  # bounded per turn (store_guard)
    prompt = first.system_prompt
    first.compress(history(12, facts={2: "ModuleNotFoundError: No module named 'yaml'"}))
    first.close()
    # another worker, another home (another machine): same prompt bytes, same archive
    second = open_session(tmp_path / "b", redis_url, "shared")
    assert second.system_prompt == prompt and second.built.origin == "stored"
    hits = json.loads(second.handle_tool_call("context_search", {"query": "ModuleNotFoundError"}))["hits"]
    assert hits[0]["ref"] == "m2.3"
    text = json.loads(second.handle_tool_call("context_expand", {"ref": "m2.3"}))["text"]
    planted = history(12, facts={2: "ModuleNotFoundError: No module named 'yaml'"})
    assert text == planted[7]["content"] and "ModuleNotFoundError" in text
    assert not (tmp_path / "b" / "sessions.db").exists()  # nothing went to a local file


def test_key_prefixes_keep_deployments_apart(tmp_path: Path, redis_url: str) -> None:
    one = open_session(tmp_path, redis_url, "same-id", prefix="one:")
    one.compress(history(12))
    other = open_session(tmp_path, redis_url, "same-id", prefix="two:")
    assert len(archive_of(other)) == 0 and len(archive_of(open_session(tmp_path, redis_url, "same-id", prefix="one:"))) > 0


def test_a_lost_server_still_serves_requests_with_clear_warnings(tmp_path: Path) -> None:
    with refused_port() as port:  # held, so no other process's server can appear there
        _a_lost_server_still_serves_requests(tmp_path, f"redis://127.0.0.1:{port}/0")


def _a_lost_server_still_serves_requests(tmp_path: Path, url: str) -> None:
    # The request's correctness outranks the store (issue 32): without the server the
    # compaction runs locally, what it removed is kept in memory and recall still finds it.
    session = open_session(tmp_path, url, "down")
    assert "You are" in session.system_prompt or session.system_prompt  # rebuilt locally
    messages = history(12, facts={2: "ModuleNotFoundError: No module named 'yaml'"})
    result = session.compress(messages).messages
    assert len(result) < len(messages)  # compacted all the same
    kinds = [w.kind for w in session.warnings]
    assert {"session_store_read_failed", "compaction_without_lease", "archive_write_deferred"} <= set(kinds)
    assert kinds.count("archive_write_deferred") == 1
    assert archive_of(session).held == 1
    hits = json.loads(session.handle_tool_call("context_search", {"query": "ModuleNotFoundError"}))["hits"]
    assert hits and "ModuleNotFoundError" in json.dumps(hits)

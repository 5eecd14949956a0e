"""Every key a plugin reads is declared by that plugin; the core keeps only what it reads."""

from __future__ import annotations

import attrs
import pytest

from hermes_core.config import Config, SessionStoreSection, TerminalSection, load_config
from hermes_core.host import PluginHost

OWNERS = {
    "archive.enabled": "archive",
    "archive.keep_secrets": "archive",
    "archive.max_bytes_per_session": "archive",
    "prompt_caching.cache_ttl": "caching",
    "prompt_caching.prompt_cache_key": "caching",
    "terminal.backend": "environment",
    "session_store.backend": "session_store",
    "session_store.url": "redis_store",
    "session_store.key_prefix": "redis_store",
    "session_store.ttl_seconds": "redis_store",
    # What the core reads itself: Session.open's default cwd, the lease, the per-turn budget.
    "terminal.cwd": "hermes-core",
    "session_store.lease_ttl_seconds": "hermes-core",
    "session_store.lease_wait_seconds": "hermes-core",
    "session_store.turn_budget_seconds": "hermes-core",
}


@pytest.fixture(scope="module")
def bound() -> Config:
    config = load_config(data={}, env={})
    return PluginHost.create(config=config, env={}).bind_config(config, env={})


@pytest.mark.parametrize("key", sorted(OWNERS))
def test_the_owner_of_each_key(bound: Config, key: str) -> None:
    assert bound.owner(key) == OWNERS[key]


def test_the_core_model_declares_none_of_the_plugins_keys() -> None:
    core = {f.name for f in attrs.fields(Config)}
    assert not {"archive", "prompt_caching"} & core
    assert {f.name for f in attrs.fields(TerminalSection)} == {"cwd"}
    assert {f.name for f in attrs.fields(SessionStoreSection)} == {
        "lease_ttl_seconds", "lease_wait_seconds", "turn_budget_seconds"}


def test_plugin_keys_read_from_the_file_and_the_environment() -> None:
    data = {"archive": {"keep_secrets": True}, "prompt_caching": {"cache_ttl": "1h"},
            "session_store": {"backend": "redis", "url": "redis://h:1/2", "lease_wait_seconds": 1.5}}
    config = load_config(data=data, env={"TERMINAL_ENV": "ssh"})
    config = PluginHost.create(config=config, env={}).bind_config(config, env={"TERMINAL_ENV": "ssh"})
    assert config.get("archive.keep_secrets") is True
    assert config.get("prompt_caching.cache_ttl") == "1h"
    assert config.get("session_store.backend") == "redis" and config.get("session_store.url") == "redis://h:1/2"
    assert config.session_store.lease_wait_seconds == 1.5
    assert config.get("terminal.backend") == "ssh"

"""``Session.open`` reuses the configuration it read while config.yaml, the environment and the
shared host stay the same, and reads again as soon as one of them changes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Session, config_cache, refresh_plugins


@pytest.fixture(autouse=True)
def _fresh_memo() -> Iterator[None]:
    config_cache.clear()
    yield
    config_cache.clear()


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every read of a config file by ``session_config`` (the home it was read for)."""
    seen: list[Path] = []
    real = config_cache.load_config

    def counting(**kwargs: Any) -> Any:
        seen.append(kwargs["home"])
        return real(**kwargs)

    monkeypatch.setattr(config_cache, "load_config", counting)
    return seen


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    # A file's ctime cannot be set back, so trust every file instead of waiting two seconds.
    monkeypatch.setattr(config_cache, "SETTLE_SECONDS", 0.0)


def open_session(home: Path, env: dict[str, str] | None = None) -> Session:
    return Session.open(cwd=str(home), home=str(home), model="gpt-5", provider="openai",
                        env={"HERMES_HOME": str(home), **(env or {})})


def test_an_unchanged_config_is_read_once(tmp_path: Path, reads: list[Path], settled: None) -> None:
    (tmp_path / "config.yaml").write_text("context:\n  engine: compressor\n", encoding="utf-8")
    first, second = open_session(tmp_path), open_session(tmp_path)
    assert reads == [tmp_path]
    assert second.config is first.config and second.host is first.host


def test_a_missing_config_is_remembered_as_missing(tmp_path: Path, reads: list[Path]) -> None:
    open_session(tmp_path)
    open_session(tmp_path)
    assert reads == [tmp_path]


def test_a_changed_config_is_read_again(tmp_path: Path, reads: list[Path], settled: None) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  system_prompt: one\n", encoding="utf-8")
    assert open_session(tmp_path).config.agent.system_prompt == "one"
    path.write_text("agent:\n  system_prompt: the second\n", encoding="utf-8")
    assert open_session(tmp_path).config.agent.system_prompt == "the second"
    path.unlink()
    assert open_session(tmp_path).config.agent.system_prompt != "the second"
    assert len(reads) == 3


def test_a_config_created_after_a_missing_one_is_read(tmp_path: Path, reads: list[Path]) -> None:
    assert open_session(tmp_path).config.agent.system_prompt != "new"
    (tmp_path / "config.yaml").write_text("agent:\n  system_prompt: new\n", encoding="utf-8")
    assert open_session(tmp_path).config.agent.system_prompt == "new"


def test_a_freshly_written_config_is_never_trusted(tmp_path: Path, reads: list[Path]) -> None:
    # Same size, maybe the same timestamp tick: only re-reading can tell these apart.
    path = tmp_path / "config.yaml"
    path.write_text("agent:\n  system_prompt: aaa\n", encoding="utf-8")
    assert open_session(tmp_path).config.agent.system_prompt == "aaa"
    path.write_text("agent:\n  system_prompt: bbb\n", encoding="utf-8")
    assert open_session(tmp_path).config.agent.system_prompt == "bbb"
    assert len(reads) == 2


def test_a_different_environment_is_read_again(tmp_path: Path, reads: list[Path]) -> None:
    plain = open_session(tmp_path)
    override = open_session(tmp_path, {"HERMES_EPHEMERAL_SYSTEM_PROMPT": "from the env"})
    assert override.config.agent.system_prompt == "from the env"
    assert plain.config.agent.system_prompt != "from the env"
    assert len(reads) == 2


def test_every_session_receives_the_warnings_of_the_read(tmp_path: Path, settled: None) -> None:
    (tmp_path / "config.yaml").write_text("no_such_section:\n  x: 1\n", encoding="utf-8")
    for _ in range(2):
        session = open_session(tmp_path)
        assert [w.kind for w in session.warnings] == ["config_unknown_key"]


def test_refreshed_plugins_mean_a_new_binding(tmp_path: Path, reads: list[Path], settled: None) -> None:
    first = open_session(tmp_path)
    refresh_plugins()
    second = open_session(tmp_path)
    assert second.host is not first.host
    assert len(reads) == 2


def test_an_unreadable_config_is_reported_every_time(tmp_path: Path) -> None:
    from hermes_core import ConfigError

    open_session(tmp_path)  # missing: remembered as such
    path = tmp_path / "config.yaml"
    path.symlink_to(tmp_path / "gone.yaml")  # still "missing" to stat, but an error to read
    for _ in range(2):
        with pytest.raises(ConfigError, match="symlink"):
            open_session(tmp_path)
    assert not os.path.exists(path)


def test_the_environment_copy_follows_every_change(monkeypatch: pytest.MonkeyPatch) -> None:
    assert config_cache.environ_copy() == dict(os.environ)
    monkeypatch.setenv("HERMES_TEST_ENV_COPY", "one")
    first = config_cache.environ_copy()
    assert first["HERMES_TEST_ENV_COPY"] == "one"
    first["HERMES_TEST_ENV_COPY"] = "mutated by a caller"  # a copy: the next caller is unaffected
    monkeypatch.setenv("HERMES_TEST_ENV_COPY", "two")
    assert config_cache.environ_copy()["HERMES_TEST_ENV_COPY"] == "two"
    monkeypatch.delenv("HERMES_TEST_ENV_COPY")
    assert "HERMES_TEST_ENV_COPY" not in config_cache.environ_copy()
    assert config_cache.environ_copy() == dict(os.environ)


def test_a_session_sees_the_environment_of_its_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def opened() -> Session:
        return Session.open(cwd=str(tmp_path), home=str(tmp_path), model="gpt-5", provider="openai")

    assert opened().config.agent.system_prompt != "from the env"
    monkeypatch.setenv("HERMES_EPHEMERAL_SYSTEM_PROMPT", "from the env")
    assert opened().config.agent.system_prompt == "from the env"
    monkeypatch.delenv("HERMES_EPHEMERAL_SYSTEM_PROMPT")
    assert opened().config.agent.system_prompt != "from the env"

"""Session: one conversation's byte-stable system prompt, its warnings and its engine."""

from __future__ import annotations

import re
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_core import (
    PluginHost,
    PromptBlock,
    PromptContext,
    Session,
    hookimpl,
    load_config,
)
from hermes_core.prompt_store import stale_reason
from hermes_core.session_open import new_session_id


class FakeClock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes-home"
    path.mkdir()
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path), "HERMES_TIMEZONE": "UTC"}


def open_session(home: Path, env: dict[str, str], cwd: Path, **kwargs: Any) -> Session:
    kwargs.setdefault("model", "gpt-4o")
    kwargs.setdefault("provider", "openai")
    kwargs.setdefault("platform", "cli")
    return Session.open(cwd=cwd, home=home, env=env, **kwargs)


def write_memory(home: Path, name: str, *entries: str) -> None:
    folder = home / "memories"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("\n§\n".join(entries), encoding="utf-8")


def test_open_sets_the_documented_attributes(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    session = open_session(
        home, env, tmp_path, tools=["terminal", {"type": "function", "function": {"name": "memory"}},
                                   {"name": "web_search"}, "terminal"],
        context_length=128_000, max_tokens=4_096, system_message="hi",
    )
    assert session.home == home and session.cwd == tmp_path
    assert (session.model, session.provider, session.platform) == ("gpt-4o", "openai", "cli")
    assert session.tools == ("terminal", "memory", "web_search")
    assert session.context_length == 128_000 and session.max_tokens == 4_096
    assert re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}", session.session_id)
    assert session.engine.session_id == session.session_id
    assert session.engine.context_length == 128_000
    assert isinstance(session.host, PluginHost)
    assert session.built is None  # nothing built until first use


def test_relative_cwd_and_home_become_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "SOUL.md").write_text("Relative soul.")
    monkeypatch.chdir(tmp_path)
    session = Session.open(cwd="proj", home="home", env={}, persist=False)
    assert session.cwd == tmp_path / "proj" and session.home == tmp_path / "home"
    assert f"Current working directory: {tmp_path / 'proj'}" in session.system_prompt
    assert session.system_prompt.startswith("Relative soul.")


def test_session_id_comes_from_the_clock() -> None:
    clock = FakeClock(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert new_session_id(clock).startswith("20260102_030405_")
    assert new_session_id(clock) != new_session_id(clock)


def test_cwd_defaults_to_terminal_cwd_when_usable(home: Path, env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "project"
    target.mkdir()
    config = load_config(data={"terminal": {"cwd": str(target)}}, env={})
    assert Session.open(home=home, env=env, config=config).cwd == target
    monkeypatch.chdir(tmp_path)
    missing = load_config(data={"terminal": {"cwd": str(tmp_path / "gone")}}, env={})
    assert Session.open(home=home, env=env, config=missing).cwd == tmp_path


def test_prompt_is_byte_identical_for_200_turns(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 1, 2, 22, 30, tzinfo=UTC))
    write_memory(home, "MEMORY.md", "The user deploys with make ship.")
    existing = home / "skills" / "devops" / "deploy"
    existing.mkdir(parents=True)
    (existing / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship a release.\n---\nSteps.\n")
    session = open_session(
        home, env, tmp_path, clock=clock,
        tools=["memory", "skill_view", "skills_list", "skill_manage", "terminal"],
    )
    first = session.system_prompt
    assert session.built is not None
    if session.host.pm.hook.hermes_prompt_skills_index.get_hookimpls():
        assert "skills_index" in session.built.block_names  # the index is part of what must hold
    first_request = session.request_system_text(ephemeral="be brief")
    assert "Conversation started: Friday, January 02, 2026" in first
    assert "make ship" in first
    for turn in range(200):
        if turn == 40:
            write_memory(home, "MEMORY.md", "The user deploys with make ship.", "Staging is on port 8443.")
            write_memory(home, "USER.md", "Prefers terse answers.")
        if turn == 70:
            skill = home / "skills" / "devops" / "rollback"
            skill.mkdir(parents=True)
            (skill / "SKILL.md").write_text("---\nname: rollback\ndescription: Roll back a release.\n---\nSteps.\n")
        if turn == 120:
            (home / "SOUL.md").write_text("You are a different agent now.")
        clock.advance(minutes=1)  # 200 minutes from 22:30 crosses midnight
        assert session.system_prompt == first
        assert session.request_system_text(ephemeral="be brief") == first_request
    assert clock().date().day == 3
    session.invalidate_system_prompt()
    rebuilt = session.system_prompt
    # Everything that happened meanwhile lands only now, proving the prompt was held back.
    assert "Conversation started: Saturday, January 03, 2026" in rebuilt
    assert "port 8443" in rebuilt and "Prefers terse answers." in rebuilt
    assert rebuilt.startswith("You are a different agent now.")
    assert session.system_prompt is rebuilt


def test_the_prompt_is_built_once(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    builds: list[int] = []

    class Counter:
        @hookimpl
        def hermes_prompt_identity(self, ctx: PromptContext) -> None:
            builds.append(1)

    host = PluginHost.create(only=(), env={}, plugins=[(Counter(), "counter")])
    session = open_session(home, env, tmp_path, host=host)
    threads = [threading.Thread(target=lambda: session.system_prompt) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for _ in range(5):
        session.system_prompt
        session.request_system_text()
    assert builds == [1]
    session.invalidate_system_prompt()
    session.system_prompt
    assert builds == [1, 1]


def test_soul_is_the_identity_and_never_a_context_file(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    (home / "SOUL.md").write_text("I am the soul of this agent.")
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("Use tabs.")
    (project / "SOUL.md").write_text("A project SOUL.md is never read.")
    session = open_session(home, env, project)
    prompt = session.system_prompt
    assert prompt.startswith("I am the soul of this agent.")
    assert prompt.count("I am the soul of this agent.") == 1
    assert "never read" not in prompt
    assert "Use tabs." in session.built.layers["context"]  # type: ignore[union-attr]
    assert [entry["loader"] for entry in session.built.context_files] == ["agents_md"]  # type: ignore[union-attr]


def test_truncation_warnings_reach_the_session(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("rule\n" * 20_000)  # 100,000 chars against a 20,000 cap
    session = open_session(home, env, tmp_path, context_length=8_000)
    session.system_prompt
    kinds = [w.kind for w in session.warnings]
    assert "context_file_truncated" in kinds
    assert session.built is not None and session.built.context_files[0]["truncated"] is True
    assert session.warnings == []


@pytest.mark.parametrize(
    ("tools", "platform", "model", "expected"),
    [
        ((), "", "gpt-4o", ["identity", "help", "environment", "session_line"]),
        (("terminal",), "cron", "claude-sonnet",
         ["identity", "help", "task_completion", "parallel_tool_calls", "environment", "platform", "session_line"]),
        (("terminal", "memory"), "telegram", "gemini-2.5-pro",
         ["identity", "help", "task_completion", "parallel_tool_calls", "tool_guidance", "steer_note",
          "tool_use_enforcement", "google_guidance", "environment", "platform", "session_line"]),
        (("terminal",), "cli", "deepseek-chat",
         ["identity", "help", "task_completion", "parallel_tool_calls", "steer_note", "tool_use_enforcement",
          "execution_guidance", "environment", "platform", "session_line"]),
    ],
)
def test_block_switches_in_a_built_prompt(
    home: Path, env: dict[str, str], tmp_path: Path, tools: tuple[str, ...], platform: str, model: str,
    expected: list[str],
) -> None:
    session = open_session(home, env, tmp_path, tools=tools, platform=platform, model=model)
    session.system_prompt
    assert session.built is not None
    assert list(session.built.block_names) == expected


def test_built_record(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    session = open_session(home, env, tmp_path, tools=["terminal"], system_message="Operator rules.")
    prompt = session.system_prompt
    built = session.built
    assert built is not None and built.prompt == prompt and built.origin == "built"
    assert built.layers["context"].startswith("Operator rules.")
    names = [b.name for b in built.blocks]
    assert names[:2] == ["identity", "help"]
    assert "system_message" in names and names[-1] == "session_line"
    assert {b.layer for b in built.blocks if b.name == "system_message"} == {"context"}


def test_request_system_text_adds_the_ephemeral_prompt_at_call_time(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    session = open_session(home, env, tmp_path)
    prompt = session.system_prompt
    assert session.request_system_text() == prompt
    assert session.request_system_text(ephemeral="Be brief today.\n") == prompt + "\n\nBe brief today."
    assert session.request_system_text(ephemeral="") == prompt
    assert session.system_prompt == prompt  # never stored
    assert "Be brief" not in session.store.get_prompt(session.session_id)


def test_ephemeral_prompt_from_config_and_env(home: Path, tmp_path: Path) -> None:
    (home / "config.yaml").write_text("agent:\n  system_prompt: From config.\n")
    session = Session.open(home=home, cwd=tmp_path, env={})
    assert session.request_system_text().endswith("\n\nFrom config.")
    assert session.request_system_text(ephemeral="Argument wins.").endswith("\n\nArgument wins.")
    from_env = Session.open(home=home, cwd=tmp_path, env={"HERMES_EPHEMERAL_SYSTEM_PROMPT": "From env."})
    assert from_env.request_system_text().endswith("\n\nFrom env.")
    assert "From" not in from_env.system_prompt


def test_warnings_in_order_and_drained_once(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    (home / "config.yaml").write_text("memroy: {}\n")  # a typo: unknown key at open

    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_platform_hint(self, ctx: PromptContext) -> PromptBlock:
            raise RuntimeError("no hint today")

    class Noisy:
        @hookimpl(tryfirst=True)
        def hermes_prompt_identity(self, ctx: PromptContext) -> None:
            from hermes_core import record_warning

            record_warning("context_file_truncated", "AGENTS.md was cut", path="AGENTS.md")

    session = Session.open(home=home, cwd=tmp_path, env=env, platform="discord")
    session.host.register(Broken(), "broken_hint")
    session.host.register(Noisy(), "noisy")
    prompt = session.system_prompt
    kinds = [w.kind for w in session.warnings if w.kind in {"config_unknown_key", "context_file_truncated", "plugin_hook_failed"}]
    assert kinds == ["config_unknown_key", "context_file_truncated", "plugin_hook_failed"]
    assert session.warnings == []
    # Only the broken plugin's answer is lost: the built-in platform hint answers instead.
    assert "Discord" in prompt and "Conversation started" in prompt
    session.system_prompt
    assert session.warnings == []  # a cached prompt raises nothing new


def test_strict_host_raises_on_a_failing_block(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    from hermes_core import HermesPluginError

    class Broken:
        @hookimpl(tryfirst=True)
        def hermes_prompt_memory(self, ctx: PromptContext) -> None:
            raise OSError("disk gone")

    host = PluginHost.create(only=(), env={}, strict=True, plugins=[(Broken(), "broken")])
    session = open_session(home, env, tmp_path, host=host)
    with pytest.raises(HermesPluginError, match="broken"):
        session.system_prompt


def test_close_runs_on_session_end_once(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    calls: list[tuple[str, str]] = []

    class Observer:
        @hookimpl
        def hermes_engine_on_session_start(self, engine: Any, session_id: str, boundary_reason: str | None) -> None:
            calls.append(("start", session_id))

        @hookimpl
        def hermes_engine_on_session_end(self, engine: Any, session_id: str, messages: list[Any]) -> None:
            calls.append(("end", session_id))

    host = PluginHost.create(only=(), env={}, plugins=[(Observer(), "observer")])
    with open_session(home, env, tmp_path, host=host) as session:
        assert calls == [("start", session.session_id)]
        session.close()
    session.close()
    assert calls == [("start", session.session_id), ("end", session.session_id)]
    assert session.closed


def test_sessions_share_a_host_but_not_prompts(home: Path, env: dict[str, str], tmp_path: Path) -> None:
    host = PluginHost.create(only=(), env={})
    a = open_session(home, env, tmp_path, host=host, model="gpt-4o")
    b = open_session(home, env, tmp_path, host=host, model="claude-sonnet")
    assert a.engine is not b.engine
    assert "Model: gpt-4o" in a.system_prompt and "Model: claude-sonnet" in b.system_prompt
    assert "Execution discipline" not in b.system_prompt


@pytest.mark.parametrize(
    ("prompt", "model", "provider", "reason"),
    [
        ("x\nModel: gpt-4o\nProvider: openai", "gpt-4o", "openai", None),
        ("x\nModel: gpt-4o\nProvider: openai", "gpt-5", "openai", "model changed from 'gpt-4o' to 'gpt-5'"),
        ("x\nModel: gpt-4o\nProvider: openai", "gpt-4o", "azure", "provider changed from 'openai' to 'azure'"),
        ("x\nModel: old\nModel: gpt-4o", "gpt-4o", "", None),  # the last line counts
        ("no labelled lines", "gpt-4o", "openai", None),
        ("x\nModel: gpt-4o", "", "", None),  # an empty runtime value proves nothing
    ],
)
def test_stale_reason(prompt: str, model: str, provider: str, reason: str | None) -> None:
    assert stale_reason(prompt, model=model, provider=provider) == reason

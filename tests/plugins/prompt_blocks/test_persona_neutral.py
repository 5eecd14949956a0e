"""Issue 34, persona: a host that brings its own identity (``Session.open(identity=...)`` or
``$HERMES_HOME/SOUL.md``) gets no Hermes-specific text anywhere in the prompt; the Hermes
identity and its documentation pointer appear only when no identity is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core import Session

from locations import DOCS

HOST_IDENTITY = "You are Acme's support agent. Answer questions about Acme's billing."
# Tools that switch on every tool-dependent block, the documentation pointer's skill clause too.
TOOLS = ("terminal", "skill_view", "skill_manage", "memory", "session_search", "web_search", "kanban_show")
PLATFORMS = ("", "cli", "tui", "desktop", "api_server", "telegram", "cron")


def _prompt(tmp_path: Path, platform: str, **kwargs: object) -> str:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    # The hermes-agent skill installed: its pointer ("questions about Hermes itself") is Hermes text.
    skill = home / "skills" / "meta" / "hermes-agent"
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_text("---\nname: hermes-agent\ndescription: How Hermes works.\n---\nSteps.\n")
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    env = {"HERMES_DESKTOP_TERMINAL": "1"}
    session = Session.open(cwd=work, home=home, model="gpt-5", provider="openai", platform=platform,
                           tools=TOOLS, env=env, persist=False, **kwargs)  # type: ignore[arg-type]
    try:
        return session.system_prompt
    finally:
        session.close()


def _hermes_specific(prompt: str) -> list[str]:
    # The index lists the installed skill by name and description like any other (the user's
    # own files); what must go is the text hermes-core itself adds about Hermes.
    prompt = prompt.replace("hermes-agent: How Hermes works.", "")
    return [word for word in ("Hermes", "hermes-agent", "nousresearch") if word in prompt]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_host_identity_leaves_no_hermes_text(tmp_path: Path, platform: str) -> None:
    prompt = _prompt(tmp_path, platform, identity=HOST_IDENTITY)
    assert prompt.startswith(HOST_IDENTITY)
    assert _hermes_specific(prompt) == []


@pytest.mark.parametrize("platform", ["cli", "tui", "api_server"])
def test_soul_md_leaves_no_hermes_text(tmp_path: Path, platform: str) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "SOUL.md").write_text("You are Ada, a careful research assistant.\n", encoding="utf-8")
    prompt = _prompt(tmp_path, platform)
    assert prompt.startswith("You are Ada")
    assert _hermes_specific(prompt) == []


def test_the_host_identity_wins_over_soul_md_which_stays_as_a_context_file(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "SOUL.md").write_text("Prefer metric units.\n", encoding="utf-8")
    prompt = _prompt(tmp_path, "cli", identity=HOST_IDENTITY)
    assert prompt.startswith(HOST_IDENTITY)
    assert prompt.count("Prefer metric units.") == 1  # the user's file is kept, once
    assert _hermes_specific(prompt) == []


@pytest.mark.parametrize("platform", ["cli", "tui", "api_server"])
def test_without_an_identity_the_default_names_hermes_and_its_docs(tmp_path: Path, platform: str) -> None:
    prompt = _prompt(tmp_path, platform)
    assert prompt.startswith("You are Hermes")
    assert "https://hermes-agent.nousresearch.com/docs" in prompt
    assert "skill_view(name='hermes-agent')" in prompt
    assert "load the hermes-agent skill first" in prompt  # the skills index's pointer
    assert "Hermes" in prompt.split("https://hermes-agent.nousresearch.com/docs", 1)[1]  # the platform hint


def test_a_blank_identity_is_no_identity(tmp_path: Path) -> None:
    assert _prompt(tmp_path, "cli", identity="   ").startswith("You are Hermes")


def test_every_other_block_turns_off_as_documented(tmp_path: Path) -> None:
    from hermes_core import load_config

    disabled = ["guidance", "environment", "platform_hints", "session_line", "skills", "context_files", "memory"]
    docs = (DOCS / "embedding.md").read_text(encoding="utf-8")
    assert f"plugins.disabled: [{', '.join(disabled[:4])}" in docs.replace("\n", " ")
    config = load_config(data={"plugins": {"disabled": disabled}}, env={})
    prompt = _prompt(tmp_path, "cli", identity=HOST_IDENTITY, config=config)
    assert prompt == HOST_IDENTITY

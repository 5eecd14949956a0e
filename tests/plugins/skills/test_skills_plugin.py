"""The skills plugin through the host: sources, the index block, config, warnings, sessions."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from hermes_core import (
    Config,
    PluginHost,
    PromptContext,
    SkillSource,
    hookimpl,
    load_config,
)
from hermes_core.diagnostics import collecting
from hermes_plugins.skills import filters, plugin
from hermes_plugins.skills.settings import SkillsSection

from skills_support import (
    SKILL_TOOLS,
    age,
    index_lines,
    make_ctx,
    write_category,
    write_skill,
)


@pytest.fixture(autouse=True)
def _fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(filters, "_host_environments", frozenset())  # not this machine's
    yield


def block_for(ctx: PromptContext) -> tuple[str, list]:
    with collecting() as warnings:
        if ctx.host is not None:
            blocks, _plugin = ctx.host.prompt_block("hermes_prompt_skills_index", ctx)
            text = blocks[0].text if blocks else ""
        else:
            result = plugin.hermes_prompt_skills_index(ctx)
            text = result.text if result else ""
    return text, list(warnings)


# --- the hook's gate and shape -------------------------------------------------------------


@pytest.mark.parametrize("tool", sorted(SKILL_TOOLS))
def test_block_only_with_a_skills_tool(hermes_home: Path, tool: str) -> None:
    write_skill(hermes_home / "skills", "coding/python-debug")
    assert block_for(make_ctx(hermes_home, tools={tool}))[0].startswith("## Skills (mandatory)")
    assert plugin.hermes_prompt_skills_index(make_ctx(hermes_home, tools={"terminal"})) == ()


def test_no_skills_dir_gives_no_block(hermes_home: Path) -> None:
    # spec §16.1 #6
    assert plugin.hermes_prompt_skills_index(make_ctx(hermes_home)) == ()


def test_reference_example(hermes_home: Path) -> None:
    # spec §16.1 #6: skills/coding/python-debug -> name, description and the index tag
    write_skill(hermes_home / "skills", "coding/python-debug", description="Debug Python code")
    block = plugin.hermes_prompt_skills_index(make_ctx(hermes_home))
    assert block.name == "skills_index"
    assert "<available_skills>" in block.text and "</available_skills>" in block.text
    assert "    - python-debug: Debug Python code" in block.text
    assert block.meta["skills"] == 1 and block.meta["origin"] == "scan"


def test_duplicate_within_a_category_appears_once(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    write_skill(root, "research/search-a", name="search", description="First")
    write_skill(root, "research/search-b", name="search", description="Second")
    text, warnings = block_for(make_ctx(hermes_home))
    assert index_lines(text).count("    - search: First") == 1 and "Second" not in text
    assert [w.kind for w in warnings] == ["skill_name_duplicate"]


def test_long_description_is_cut_and_missing_frontmatter_is_listed(hermes_home: Path) -> None:
    # spec §16.1 #5
    root = hermes_home / "skills"
    write_skill(root, "c/long", description="x" * 100)
    write_skill(root, "c/bare", raw="Just a body, no frontmatter.\n")
    text, warnings = block_for(make_ctx(hermes_home))
    assert "    - long: " + "x" * 57 + "..." in text
    assert "    - bare\n" in text + "\n"
    assert [w.kind for w in warnings] == ["skill_frontmatter_incomplete"]
    assert warnings[0].plugin == "skills" and warnings[0].path.endswith("bare/SKILL.md")


def test_platform_filter(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # spec §16.1 #5-6: a macOS-only skill is hidden on linux and shown on darwin
    write_skill(hermes_home / "skills", "apple/mac-tool", extra="platforms: [macos]")
    write_skill(hermes_home / "skills", "apple/any")
    monkeypatch.setattr(sys, "platform", "linux")
    assert "mac-tool" not in block_for(make_ctx(hermes_home))[0]
    monkeypatch.setattr(sys, "platform", "darwin")
    assert "mac-tool" in block_for(make_ctx(hermes_home))[0]


def test_prerequisites_do_not_hide(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/needs-env", extra="prerequisites:\n  env_vars: [SOME_KEY]")
    assert "needs-env" in block_for(make_ctx(hermes_home))[0]


def test_environment_and_tool_conditions(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    write_skill(root, "c/in-docker", extra="environments: [docker]")
    write_skill(root, "c/web", extra="metadata:\n  hermes:\n    requires_tools: [web_search]")
    write_skill(root, "c/ddg", extra="fallback_for_tools: [web_search]")
    local = block_for(make_ctx(hermes_home, tools={"skill_view"}))[0]
    assert "in-docker" not in local and "    - web:" not in local and "    - ddg:" in local
    docker = block_for(make_ctx(hermes_home, tools={"skill_view", "web_search"}, backend="docker"))[0]
    assert "in-docker" in docker and "    - web:" in docker and "ddg" not in docker


def test_disable_model_invocation_hides(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/manual", extra="disable-model-invocation: true")
    write_skill(hermes_home / "skills", "c/auto")
    text = block_for(make_ctx(hermes_home))[0]
    assert "manual" not in text and "auto" in text


# --- config ---------------------------------------------------------------------------------


def test_disabled_by_name_or_directory(hermes_home: Path) -> None:
    # spec §16.1 #7
    root = hermes_home / "skills"
    write_skill(root, "web/old-tool")
    write_skill(root, "web/web-search")
    write_skill(root, "web/dir-name", name="shown-name")
    config = Config().with_sections(SkillsSection(disabled=("old-tool", "dir-name")))
    text = block_for(make_ctx(hermes_home, config=config))[0]
    assert "web-search" in text and "old-tool" not in text and "shown-name" not in text


def test_config_edit_is_seen_on_the_next_build(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    write_skill(root, "c/cached-skill")
    write_skill(root, "c/other")
    assert "cached-skill" in block_for(make_ctx(hermes_home, config=load_config(home=hermes_home)))[0]
    (hermes_home / "config.yaml").write_text("skills:\n  disabled: [cached-skill]\n")
    text = block_for(make_ctx(hermes_home, config=load_config(home=hermes_home)))[0]
    assert "cached-skill" not in text and "other" in text


def test_platform_disabled(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/noisy")
    config = Config().with_sections(SkillsSection(platform_disabled={"telegram": ["noisy"]}))
    assert "noisy" not in block_for(make_ctx(hermes_home, config=config, platform="telegram"))[0]
    assert "noisy" in block_for(make_ctx(hermes_home, config=config, platform="cli"))[0]
    env = {"HERMES_PLATFORM": "telegram"}
    assert "noisy" not in block_for(make_ctx(hermes_home, config=config, env=env))[0]


def test_compacted_categories(hermes_home: Path) -> None:
    # spec §16.1 #8
    root = hermes_home / "skills"
    write_skill(root, "social-media/twitter/thread-writer", description="Write threads")
    write_skill(root, "coding/debug", description="Debug")
    compact = block_for(make_ctx(hermes_home, compact={"social-media"}))[0]
    assert "  social-media/twitter [names only]: thread-writer" in compact
    assert "Write threads" not in compact and "    - debug: Debug" in compact
    assert "    - thread-writer: Write threads" in block_for(make_ctx(hermes_home))[0]


def test_budget_from_config_and_from_the_window(hermes_home: Path) -> None:
    root = hermes_home / "skills"
    for i in range(40):
        write_skill(root, f"big/s{i:02d}", description="a description long enough to cost tokens")
    for i in range(3):
        write_skill(root, f"small/t{i}", description="short")
    full, _ = block_for(make_ctx(hermes_home))
    tokens = (len(full) + 3) // 4
    config = Config().with_sections(SkillsSection(index_max_tokens=tokens - 50))
    text, warnings = block_for(make_ctx(hermes_home, config=config))
    assert "  big [names only]: s00, s01" in text and "    - t0: short" in text
    assert [w.kind for w in warnings] == ["skills_index_collapsed"]
    assert warnings[0].details["collapsed"] == ("big",) and "big" in warnings[0].message
    # default: 2% of a known window; no window, no budget
    window = (tokens - 50) * 50
    assert "[names only]" in block_for(make_ctx(hermes_home, context_length=window))[0]
    assert "[names only]" not in block_for(make_ctx(hermes_home, context_length=None))[0]
    assert "[names only]" not in block_for(make_ctx(hermes_home, context_length=tokens * 50 + 50))[0]


def test_warnings_are_reported_again_on_a_cache_hit(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/broken", raw="---\nname: broken\n---\n")
    _, first = block_for(make_ctx(hermes_home))
    _, second = block_for(make_ctx(hermes_home))
    assert [w.kind for w in first] == [w.kind for w in second] == ["skill_frontmatter_incomplete"]


# --- sources ------------------------------------------------------------------------------


def test_default_sources_resolve_external_dirs(hermes_home: Path, tmp_path: Path) -> None:
    config = Config().with_sections(SkillsSection(external_dirs=(
        "shared", "  ", "${TEAM}/skills", "~/mine", "shared/", str(hermes_home / "skills"), "$TEAM/skills",
    )))
    ctx = make_ctx(hermes_home, config=config, env={"TEAM": str(tmp_path / "team")})
    sources = plugin.default_sources(ctx)
    assert [(str(s.path), s.label, s.precedence, s.snapshot) for s in sources] == [
        (str(hermes_home / "skills"), "local", 0, True),
        (str(hermes_home / "shared"), "external", 50, False),
        (str(tmp_path / "team" / "skills"), "external", 50, False),
        (str(Path("~/mine").expanduser()), "external", 50, False),
    ]


def test_external_dirs_are_indexed_local_wins_and_missing_is_reported(hermes_home: Path, tmp_path: Path) -> None:
    write_skill(hermes_home / "skills", "c/shared-name", description="local copy")
    team = tmp_path / "team"
    write_skill(team, "c/shared-name", description="team copy")
    write_skill(team, "team-cat/team-only", description="from the team")
    write_category(team, "team-cat", "Team things")
    config = Config().with_sections(SkillsSection(external_dirs=(str(team), str(tmp_path / "gone"))))
    host = PluginHost.create(only=())
    text, warnings = block_for(make_ctx(hermes_home, config=config, host=host))
    assert "    - shared-name: local copy" in text and "team copy" not in text
    assert "  team-cat: Team things" in text and "    - team-only: from the team" in text
    assert [w.kind for w in warnings] == ["skills_dir_missing"]
    assert warnings[0].path == str(tmp_path / "gone")


def test_a_plugin_adds_a_skill_directory(hermes_home: Path, tmp_path: Path) -> None:
    acme = tmp_path / "acme-skills"
    write_skill(acme, "acme/deploy", description="Deploy the Acme way")
    write_skill(acme, "c/clash", description="acme's version")
    write_skill(hermes_home / "skills", "c/clash", description="the user's version")

    class AcmeSkills:
        @hookimpl
        def hermes_skills_sources(self, ctx: PromptContext) -> SkillSource:
            return SkillSource(path=acme, label="acme", precedence=60)

    host = PluginHost.create(only=(), plugins=[(AcmeSkills(), "acme_skills")])
    ctx = make_ctx(hermes_home, host=host)
    assert [s.label for s in host.skill_sources(ctx)] == ["local", "acme"]
    text, _ = block_for(ctx)
    assert "    - deploy: Deploy the Acme way" in text
    assert "the user's version" in text and "acme's version" not in text


def test_a_plugin_replaces_the_block(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/s")

    class Mine:
        @hookimpl
        def hermes_prompt_skills_index(self, ctx: PromptContext) -> tuple[()]:
            return ()

    host = PluginHost.create(only=(), plugins=[(Mine(), "mine")])
    blocks, answered = host.prompt_block("hermes_prompt_skills_index", make_ctx(hermes_home, host=host))
    assert blocks == () and answered == "mine"


def test_blocking_the_builtin(hermes_home: Path) -> None:
    write_skill(hermes_home / "skills", "c/s")
    host = PluginHost.create(only=(), blocked=("skills",))
    assert host.prompt_block("hermes_prompt_skills_index", make_ctx(hermes_home, host=host)) == ((), None)


def test_session_prompt_carries_the_index(hermes_home: Path, tmp_path: Path) -> None:
    from hermes_core import Session

    write_skill(hermes_home / "skills", "devops/deploy", description="Ship a release.")
    age(hermes_home / "skills")
    session = Session.open(
        cwd=tmp_path, home=hermes_home, env={"HOME": str(tmp_path)}, model="gpt-4o",
        tools=["skill_view", "terminal"], persist=False,
    )
    assert "    - deploy: Ship a release." in session.system_prompt
    assert session.system_prompt.index("## Skills (mandatory)") > 0


def test_request_is_hashable_and_carries_every_input(hermes_home: Path) -> None:
    ctx = make_ctx(hermes_home, tools={"skill_view"}, toolsets={"web"}, platform="cli", compact={"a"},
                   context_length=100_000, env={"TERMUX_VERSION": "1"})
    request = plugin.request_for(ctx)
    assert hash(request) == hash(plugin.request_for(attrs.evolve(ctx)))
    assert request.tools == {"skill_view"} and request.toolsets == {"web"}
    assert request.platform == "cli" and request.compact == {"a"} and request.termux
    assert request.budget == 2_000 and request.os_platform == sys.platform

"""Context files: the four built-in loaders, their search rules and their precedence.

Every test builds a real directory tree, with a real ``git init`` where a repository matters,
and asks the real host for the ``context_files`` block.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Config, PluginHost, PromptBlock, PromptContext
from hermes_core.diagnostics import HostWarning, collecting
from hermes_plugins.context_files import gitroot
from hermes_plugins.context_files.gitroot import find_git_root
from hermes_plugins.context_files.hermes_md import strip_frontmatter


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def build(
    host: PluginHost, cwd: Path, home: Path | None = None, **kwargs: object
) -> tuple[PromptBlock | None, list[HostWarning]]:
    home = home or cwd / "no-such-home"
    ctx = PromptContext(cwd=cwd, home=home, config=Config(), host=host, **kwargs)  # type: ignore[arg-type]
    with collecting() as warnings:
        blocks, _plugin = host.prompt_block("hermes_prompt_context_files", ctx)
    return (blocks[0] if blocks else None), list(warnings)


def labels(block: PromptBlock | None) -> list[str]:
    assert block is not None
    return [line[3:] for line in block.text.splitlines() if line.startswith("## ")]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory with no repository above it (checked, so a stray .git cannot fool a test)."""
    assert find_git_root(tmp_path) is None
    return tmp_path


# --- nothing found, one found -----------------------------------------------------------------


def test_no_context_file_gives_no_block(plugin_host: PluginHost, outside: Path) -> None:
    block, warnings = build(plugin_host, outside)
    assert block is None and warnings == []


def test_agents_md_loads_under_project_context(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "AGENTS.md", "Use Python 3.12 with FastAPI.\n")
    block, _ = build(plugin_host, outside)
    assert block is not None and block.name == "context_files"
    assert block.text.startswith("# Project Context\n\n")
    assert "## AGENTS.md\n\nUse Python 3.12 with FastAPI." in block.text
    assert block.meta["sources"] == [{
        "path": str(outside / "AGENTS.md"), "rank": 2.0, "loader": "agents_md",
        "chars": 29, "kept_chars": 29, "truncated": False, "blocked": [],
    }]


# --- precedence: the first rank that finds anything wins --------------------------------------

ALL_FOUR = {
    ".hermes.md": "hermes rules",
    "AGENTS.md": "agents rules",
    "CLAUDE.md": "claude rules",
    ".cursorrules": "cursor rules",
}


@pytest.mark.parametrize("present,winner", [
    ((".hermes.md", "AGENTS.md", "CLAUDE.md", ".cursorrules"), ".hermes.md"),
    (("AGENTS.md", "CLAUDE.md", ".cursorrules"), "AGENTS.md"),
    (("CLAUDE.md", ".cursorrules"), "CLAUDE.md"),
    ((".cursorrules",), ".cursorrules"),
])
def test_only_the_highest_ranked_source_loads(
    plugin_host: PluginHost, outside: Path, present: tuple[str, ...], winner: str
) -> None:
    for name in present:
        write(outside / name, ALL_FOUR[name])
    block, _ = build(plugin_host, outside)
    assert block is not None
    assert labels(block) == [winner]
    assert ALL_FOUR[winner] in block.text
    assert all(ALL_FOUR[n] not in block.text for n in present if n != winner)


def test_dot_hermes_md_beats_hermes_md(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "HERMES.md", "upper")
    write(outside / ".hermes.md", "dotted")
    block, _ = build(plugin_host, outside)
    assert block is not None and "dotted" in block.text and "upper" not in block.text
    (outside / ".hermes.md").unlink()
    block, _ = build(plugin_host, outside)
    assert block is not None and "upper" in block.text and labels(block) == ["HERMES.md"]


def test_claude_md_beats_lowercase(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "claude.md", "lower")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["claude.md"]
    write(outside / "CLAUDE.md", "upper")
    block, _ = build(plugin_host, outside)
    assert block is not None and "upper" in block.text and "lower" not in block.text


def test_an_empty_file_does_not_win(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "AGENTS.md", "\n\n   \n")
    write(outside / "CLAUDE.md", "claude rules")
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["CLAUDE.md"] and warnings == []


# --- HERMES.md: up to the git root, cwd only without a repository ------------------------------


def test_frontmatter_is_stripped(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / ".hermes.md", "---\nmodel: big\ntools: [a]\n---\n\nReal rules.\n")
    block, _ = build(plugin_host, outside)
    assert block is not None and "Real rules." in block.text and "model: big" not in block.text


@pytest.mark.parametrize("text,expected", [
    ("---\nkey: value\n---\n\nBody text.", "Body text."),
    ("\ufeff---\nkey: value\n---\nBody", "Body"),
    ("---\r\nkey: value\r\n---\r\nBody", "Body"),
    ("---\nkey: value\nno closing fence", "---\nkey: value\nno closing fence"),
    ("---\nkey: value\n---\n\n", "---\nkey: value\n---\n\n"),
    ("no frontmatter\n---\n", "no frontmatter\n---\n"),
])
def test_strip_frontmatter(text: str, expected: str) -> None:
    assert strip_frontmatter(text) == expected


def test_hermes_md_is_found_up_to_the_git_root(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    write(tmp_path / ".hermes.md", "beyond the root")
    write(repo / "HERMES.md", "at the root")
    cwd = repo / "a" / "b"
    cwd.mkdir(parents=True)
    block, _ = build(plugin_host, cwd)
    assert block is not None and "at the root" in block.text and labels(block) == ["HERMES.md"]
    (repo / "HERMES.md").unlink()
    block, _ = build(plugin_host, cwd)
    assert block is None  # the file above the repository is never read


def test_nearest_hermes_md_wins(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    write(repo / ".hermes.md", "root rules")
    write(repo / "a" / "HERMES.md", "a rules")
    block, _ = build(plugin_host, repo / "a")
    assert block is not None and "a rules" in block.text and "root rules" not in block.text
    assert labels(block) == ["a/HERMES.md"]


def test_without_a_repository_only_cwd_is_searched(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / ".hermes.md", "parent rules")
    write(outside / "AGENTS.md", "parent agents")
    cwd = outside / "sub"
    cwd.mkdir()
    block, _ = build(plugin_host, cwd)
    assert block is None
    write(cwd / "HERMES.md", "own rules")
    block, _ = build(plugin_host, cwd)
    assert block is not None and "own rules" in block.text and "parent" not in block.text


def test_git_root_from_any_subdirectory_and_as_a_file(tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    deep = repo / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_git_root(deep) == repo
    worktree = tmp_path / "worktree"
    write(worktree / ".git", "gitdir: /somewhere/else\n")
    (worktree / "x").mkdir()
    assert find_git_root(worktree / "x") == worktree


def test_looking_for_git_costs_one_stat_per_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    looked: list[str] = []
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        looked.append(os.fspath(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert gitroot.find_git_root(cwd) is None
    assert len(looked) == len(cwd.parents) + 1  # cwd and each ancestor, once (was twice)
    assert all(path.endswith(".git") for path in looked)


def test_permission_error_while_looking_for_git_means_no_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd = tmp_path / "a"
    cwd.mkdir()
    (tmp_path / ".git").mkdir()  # there, but we may not look at it
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(path) == tmp_path / ".git":
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert gitroot.find_git_root(cwd) is None


# --- the AGENTS.md chain ------------------------------------------------------------------------


def monorepo(tmp_path: Path) -> tuple[Path, Path]:
    repo = git_init(tmp_path / "repo")
    cwd = repo / "packages" / "webapp"
    write(repo / "AGENTS.md", "root rules")
    write(repo / "packages" / "AGENTS.md", "packages rules")
    write(cwd / "AGENTS.md", "webapp rules")
    return repo, cwd


def test_agents_chain_merges_root_to_cwd(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo, cwd = monorepo(tmp_path)
    block, _ = build(plugin_host, cwd)
    assert block is not None
    assert labels(block) == ["AGENTS.md", "packages/AGENTS.md", "packages/webapp/AGENTS.md"]
    text = block.text
    assert text.index("root rules") < text.index("packages rules") < text.index("webapp rules")
    assert [s["path"] for s in block.meta["sources"]] == [
        str(repo / "AGENTS.md"), str(repo / "packages" / "AGENTS.md"), str(cwd / "AGENTS.md"),
    ]


def test_agents_chain_gaps_add_nothing(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo, cwd = monorepo(tmp_path)
    (repo / "AGENTS.md").unlink()
    (cwd / "AGENTS.md").unlink()
    block, _ = build(plugin_host, cwd)
    assert block is not None and labels(block) == ["packages/AGENTS.md"]
    assert block.text.count("## ") == 1


def test_agents_chain_never_repeats_content(plugin_host: PluginHost, tmp_path: Path) -> None:
    _repo, cwd = monorepo(tmp_path)
    write(cwd / "AGENTS.md", "root rules")
    block, _ = build(plugin_host, cwd)
    assert block is not None and block.text.count("root rules") == 1
    assert labels(block) == ["AGENTS.md", "packages/AGENTS.md"]


def test_agents_chain_never_includes_one_file_twice(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo, cwd = monorepo(tmp_path)
    (repo / "packages" / "AGENTS.md").unlink()
    (repo / "packages" / "AGENTS.md").symlink_to(repo / "AGENTS.md")
    block, warnings = build(plugin_host, cwd)
    assert block is not None and warnings == []
    assert labels(block) == ["AGENTS.md", "packages/webapp/AGENTS.md"]


def test_agents_override_replaces_agents_md(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo, cwd = monorepo(tmp_path)
    write(repo / "packages" / "AGENTS.override.md", "packages override")
    block, _ = build(plugin_host, cwd)
    assert block is not None
    assert labels(block) == ["AGENTS.md", "packages/AGENTS.override.md", "packages/webapp/AGENTS.md"]
    assert "packages rules" not in block.text and "packages override" in block.text


def test_agents_override_loads_alone(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "AGENTS.override.md", "override only")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["AGENTS.override.md"]


def test_lowercase_agents_md_is_a_fallback(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "agents.md", "lowercase rules")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["agents.md"]


def test_hermes_md_beats_the_override(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "AGENTS.override.md", "override")
    write(outside / ".hermes.md", "hermes")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == [".hermes.md"]


def test_agents_chain_without_a_repository_is_cwd_only(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "AGENTS.md", "parent agents")
    cwd = outside / "sub"
    cwd.mkdir()
    block, _ = build(plugin_host, cwd)
    assert block is None


def test_agents_chain_at_the_root_is_one_file(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo, _cwd = monorepo(tmp_path)
    block, _ = build(plugin_host, repo)
    assert block is not None and labels(block) == ["AGENTS.md"]


# --- CLAUDE.md and .cursorrules: cwd only ---------------------------------------------------------


def test_claude_md_is_read_in_cwd_only(plugin_host: PluginHost, tmp_path: Path) -> None:
    repo = git_init(tmp_path / "repo")
    write(repo / "CLAUDE.md", "root claude")
    cwd = repo / "sub"
    cwd.mkdir()
    block, _ = build(plugin_host, cwd)
    assert block is None
    write(cwd / "CLAUDE.md", "sub claude")
    block, _ = build(plugin_host, cwd)
    assert block is not None and labels(block) == ["CLAUDE.md"] and "root claude" not in block.text


def test_cursor_rules_in_name_order_after_cursorrules(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / ".cursorrules", "legacy rules")
    write(outside / ".cursor" / "rules" / "zeta.mdc", "zeta rule")
    write(outside / ".cursor" / "rules" / "alpha.mdc", "alpha rule")
    write(outside / ".cursor" / "rules" / "notes.txt", "not a rule")
    block, _ = build(plugin_host, outside)
    assert labels(block) == [".cursorrules", ".cursor/rules/alpha.mdc", ".cursor/rules/zeta.mdc"]
    assert block is not None and "not a rule" not in block.text


def test_cursor_rules_without_cursorrules(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / ".cursor" / "rules" / "custom.mdc", "custom rule")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == [".cursor/rules/custom.mdc"]
    assert block.meta["sources"][0]["loader"] == "cursorrules"
    assert block.meta["sources"][0]["rank"] == 4.0


def test_cursor_rules_in_a_parent_are_ignored(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / ".cursorrules", "parent rules")
    (outside / "sub").mkdir()
    block, _ = build(plugin_host, outside / "sub")
    assert block is None


def test_missing_cwd_gives_no_block(plugin_host: PluginHost, outside: Path) -> None:
    block, warnings = build(plugin_host, outside / "gone")
    assert block is None and warnings == []

"""Context files: the block - third-party loaders, SOUL.md, sizing to the window, the report,
and warnings that stay with the build that caused them (threads and asyncio tasks)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_core import (
    Config,
    ContextFile,
    ContextFileLoader,
    PluginHost,
    PromptBlock,
    PromptContext,
    hookimpl,
    load_config,
)
from hermes_core.diagnostics import HostWarning, collecting, drain_warnings
from hermes_plugins.context_files import plugin as block_module
from hermes_plugins.context_files.gitroot import find_git_root

Register = Callable[[object, str], object]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def context(host: PluginHost | None, cwd: Path, home: Path | None = None, **kwargs: object) -> PromptContext:
    return PromptContext(cwd=cwd, home=home or cwd / "no-such-home",
                         config=kwargs.pop("config", Config()), host=host, **kwargs)  # type: ignore[arg-type]


def build(
    host: PluginHost, cwd: Path, home: Path | None = None, **kwargs: object
) -> tuple[PromptBlock | None, list[HostWarning]]:
    with collecting() as warnings:
        blocks, _ = host.prompt_block("hermes_prompt_context_files", context(host, cwd, home, **kwargs))
    return (blocks[0] if blocks else None), list(warnings)


def loader_plugin(**fields: Any) -> object:
    """A plugin contributing one ``ContextFileLoader`` built from ``fields``."""

    class Plugin:
        @hookimpl
        def hermes_context_file_loaders(self, ctx: PromptContext) -> ContextFileLoader:
            return ContextFileLoader(**fields)

    return Plugin()


def labels(block: PromptBlock | None) -> list[str]:
    assert block is not None
    return [line[3:] for line in block.text.splitlines() if line.startswith("## ")]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    assert find_git_root(project) is None
    return project


def gemini_plugin(calls: list[str]) -> object:
    """A third party's loader for GEMINI.md in cwd, at rank 2.5."""

    def load(ctx: PromptContext) -> tuple[ContextFile, ...]:
        calls.append("gemini")
        path = Path(ctx.cwd) / "GEMINI.md"
        if not path.is_file():
            return ()
        return (ContextFile(path=path, label="GEMINI.md", text=path.read_text()),)

    return loader_plugin(name="gemini_md", rank=2.5, load=load, patterns=("GEMINI.md",))


# --- third-party loaders ----------------------------------------------------------------------


def test_third_party_loader_at_rank_2_5(
    plugin_host: PluginHost, register_plugin: Register, outside: Path
) -> None:
    calls: list[str] = []
    register_plugin(gemini_plugin(calls), "gemini")
    write(outside / "GEMINI.md", "gemini rules")
    write(outside / "CLAUDE.md", "claude rules")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["GEMINI.md"]  # beats CLAUDE.md (rank 3)
    assert block.meta["sources"][0]["loader"] == "gemini_md"
    assert block.meta["sources"][0]["rank"] == 2.5
    write(outside / "AGENTS.md", "agents rules")
    calls.clear()
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["AGENTS.md"]  # loses to AGENTS.md (rank 2)
    assert calls == []  # never even called once a better rank found something


def test_third_party_replaces_a_built_in_by_name(
    plugin_host: PluginHost, register_plugin: Register, outside: Path
) -> None:
    def load(ctx: PromptContext) -> tuple[ContextFile, ...]:
        path = Path(ctx.cwd) / "CLAUDE.local.md"
        return (ContextFile(path=path, label="CLAUDE.local.md", text=path.read_text()),) if path.exists() else ()

    replacement = loader_plugin(name="claude_md", rank=3, load=load)

    register_plugin(replacement, "claude_local")
    write(outside / "CLAUDE.md", "built-in would read this")
    block, _ = build(plugin_host, outside)
    assert block is None  # the built-in claude_md loader is gone, not merely outranked
    write(outside / "CLAUDE.local.md", "local rules")
    block, _ = build(plugin_host, outside)
    assert block is not None and labels(block) == ["CLAUDE.local.md"]
    assert "built-in would read this" not in block.text


def test_lower_ranks_are_never_called_once_one_finds_something(
    plugin_host: PluginHost, register_plugin: Register, outside: Path
) -> None:
    calls: list[str] = []

    def spy(ctx: PromptContext) -> tuple[ContextFile, ...]:
        calls.append("spy")
        return ()

    spying = loader_plugin(name="spy", rank=1.5, load=spy)

    register_plugin(spying, "spy")
    write(outside / "HERMES.md", "hermes")
    build(plugin_host, outside)
    assert calls == []
    (outside / "HERMES.md").unlink()
    build(plugin_host, outside)
    assert calls == ["spy"]


def test_a_raising_loader_costs_only_itself(
    plugin_host: PluginHost, register_plugin: Register, outside: Path
) -> None:
    def boom(ctx: PromptContext) -> tuple[ContextFile, ...]:
        raise RuntimeError("disk on fire")

    broken = loader_plugin(name="broken", rank=0.5, load=boom)

    register_plugin(broken, "broken")
    write(outside / "AGENTS.md", "agents rules")
    block, warnings = build(plugin_host, outside)
    assert block is not None and labels(block) == ["AGENTS.md"]
    assert [(w.kind, w.plugin) for w in warnings] == [("context_file_loader_failed", "broken")]
    assert "disk on fire" in warnings[0].message


def test_a_raising_loader_fails_a_strict_host(outside: Path) -> None:
    from hermes_core import HermesPluginError

    def boom(ctx: PromptContext) -> tuple[ContextFile, ...]:
        raise RuntimeError("disk on fire")

    broken = loader_plugin(name="broken", rank=0.5, load=boom)

    host = PluginHost.create(only=(), strict=True, plugins=[(broken, "broken")])
    with pytest.raises(HermesPluginError, match="disk on fire"):
        host.prompt_block("hermes_prompt_context_files", context(host, outside))


def test_unsized_third_party_text_is_sized_by_the_block(
    plugin_host: PluginHost, register_plugin: Register, outside: Path
) -> None:
    calls: list[str] = []
    register_plugin(gemini_plugin(calls), "gemini")
    write(outside / "GEMINI.md", "G" * 50_000)
    block, warnings = build(plugin_host, outside)
    assert block is not None
    source = block.meta["sources"][0]
    assert source["truncated"] and source["chars"] == 50_000 and source["kept_chars"] == 18_000
    assert [w.kind for w in warnings] == ["context_file_truncated"]
    assert warnings[0].plugin == "gemini_md" and warnings[0].path == str(outside / "GEMINI.md")


def test_without_a_host_the_built_ins_are_used(outside: Path) -> None:
    write(outside / "CLAUDE.md", "claude rules")
    block = block_module.hermes_prompt_context_files(context(None, outside))
    assert isinstance(block, PromptBlock) and "claude rules" in block.text
    assert block.meta["sources"][0]["loader"] == "claude_md"


def test_nothing_found_returns_an_empty_tuple(outside: Path) -> None:
    assert block_module.hermes_prompt_context_files(context(None, outside)) == ()


# --- SOUL.md ------------------------------------------------------------------------------------


def test_soul_is_not_loaded_again_when_it_is_the_identity(plugin_host: PluginHost, outside: Path) -> None:
    home = outside.parent / "home"
    write(home / "SOUL.md", "I am the soul.")
    write(outside / "AGENTS.md", "agents rules")
    block, _ = build(plugin_host, outside, home, soul_loaded=True)
    assert block is not None and "I am the soul." not in block.text
    assert [s["loader"] for s in block.meta["sources"]] == ["agents_md"]


def test_soul_is_appended_when_another_identity_replaced_it(
    plugin_host: PluginHost, outside: Path
) -> None:
    home = outside.parent / "home"
    write(home / "SOUL.md", "I am the soul.\n")
    write(outside / "AGENTS.md", "agents rules")
    block, _ = build(plugin_host, outside, home, soul_loaded=False)
    assert block is not None and block.text.endswith("agents rules\n\nI am the soul.")
    assert "## SOUL.md" not in block.text  # bare, as the identity would be
    assert [s["loader"] for s in block.meta["sources"]] == ["agents_md", "soul"]
    # SOUL.md alone still makes a block; a cwd SOUL.md is never read.
    (outside / "AGENTS.md").unlink()
    write(outside / "SOUL.md", "cwd soul")
    block, _ = build(plugin_host, outside, home, soul_loaded=False)
    assert block is not None and "I am the soul." in block.text and "cwd soul" not in block.text


def test_soul_of_blank_lines_gives_no_block(plugin_host: PluginHost, outside: Path) -> None:
    home = outside.parent / "home"
    write(home / "SOUL.md", "\n\n\n")
    block, _ = build(plugin_host, outside, home, soul_loaded=False)
    assert block is None


# --- sizing to the window, and the report -------------------------------------------------------


def test_a_30000_char_file_is_cut_for_a_small_window_and_kept_for_a_large_one(
    plugin_host: PluginHost, outside: Path
) -> None:
    write(outside / "AGENTS.md", "".join(f"rule {i:05d}: keep it tidy.\n" for i in range(1_200)))
    chars = len((outside / "AGENTS.md").read_text().strip())
    assert chars > 30_000
    small, warnings = build(plugin_host, outside, context_length=8_000)
    assert small is not None and small.meta["max_chars"] == 20_000
    source = small.meta["sources"][0]
    assert source["truncated"] and source["chars"] == chars and source["kept_chars"] <= 18_000
    assert str(outside / "AGENTS.md") in small.text and "read_file" in small.text
    (warning,) = warnings
    assert warning.kind == "context_file_truncated" and warning.path == str(outside / "AGENTS.md")
    assert warning.details["original_chars"] == chars
    assert warning.details["kept_chars"] == source["kept_chars"]
    large, warnings = build(plugin_host, outside, context_length=200_000)
    assert large is not None and large.meta["max_chars"] == 48_000 and warnings == []
    assert large.meta["sources"][0] == {
        "path": str(outside / "AGENTS.md"), "rank": 2.0, "loader": "agents_md",
        "chars": chars, "kept_chars": chars, "truncated": False, "blocked": [],
    }


def test_configured_cap_wins_over_the_window(plugin_host: PluginHost, outside: Path) -> None:
    write(outside / "CLAUDE.md", "x" * 1_500)
    cfg = load_config(data={"context": {"file_max_chars": 1_000}}, env={})
    block, warnings = build(plugin_host, outside, config=cfg, context_length=1_000_000)
    assert block is not None and block.meta["max_chars"] == 1_000
    assert block.meta["sources"][0]["kept_chars"] == 900
    assert len(warnings) == 1


def test_a_chain_shares_one_cap(plugin_host: PluginHost, tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    cwd = repo / "app"
    write(repo / "AGENTS.md", "root: short and whole")
    write(repo / "app" / "AGENTS.md", "A" * 30_000)
    cfg = load_config(data={"context": {"file_max_chars": 10_000}}, env={})
    block, warnings = build(plugin_host, cwd, config=cfg)
    assert block is not None
    root, app = block.meta["sources"]
    assert not root["truncated"] and root["kept_chars"] == root["chars"]
    assert app["truncated"] and root["kept_chars"] + app["kept_chars"] <= 10_000
    assert [w.path for w in warnings] == [str(repo / "app" / "AGENTS.md")]


# --- warnings stay with their own build ---------------------------------------------------------


def _truncating_tree(base: Path, name: str) -> Path:
    project = base / name
    write(project / "AGENTS.md", f"{name} " * 10_000)
    (project / "AGENTS.override.md").write_bytes(b"binary\x00junk")  # skipped, with a warning
    return project


def _expected(project: Path) -> list[str | None]:
    return [str(project / "AGENTS.override.md"), str(project / "AGENTS.md")]


def test_concurrent_builds_in_threads_keep_their_own_warnings(
    plugin_host: PluginHost, tmp_path: Path
) -> None:
    drain_warnings()  # whatever earlier tests left in this thread's own collector
    projects = [_truncating_tree(tmp_path, f"p{i}") for i in range(8)]
    barrier = threading.Barrier(len(projects))
    seen: dict[str, list[HostWarning]] = {}

    def run(project: Path) -> None:
        with collecting() as warnings:
            barrier.wait()
            for _ in range(3):
                plugin_host.prompt_block(
                    "hermes_prompt_context_files", context(plugin_host, project),
                )
            seen[project.name] = list(warnings)

    threads = [threading.Thread(target=run, args=(p,)) for p in projects]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for project in projects:
        warnings = seen[project.name]
        assert [w.path for w in warnings] == _expected(project) * 3
    assert drain_warnings() == []  # nothing leaked into the test's own context


def test_concurrent_builds_in_asyncio_tasks_keep_their_own_warnings(
    plugin_host: PluginHost, tmp_path: Path
) -> None:
    drain_warnings()
    projects = [_truncating_tree(tmp_path, f"t{i}") for i in range(6)]

    async def one(project: Path) -> list[HostWarning]:
        with collecting() as warnings:
            for _ in range(3):
                await asyncio.sleep(0)  # let the other tasks build in between
                plugin_host.prompt_block("hermes_prompt_context_files", context(plugin_host, project))
                await asyncio.sleep(0)
            return list(warnings)

    async def main() -> list[list[HostWarning]]:
        return await asyncio.gather(*(one(p) for p in projects))

    results = asyncio.run(main())
    for project, warnings in zip(projects, results, strict=True):
        assert [w.path for w in warnings] == _expected(project) * 3
    assert drain_warnings() == []


# --- end to end: the Session and `hermes-ctx prompt --json` ------------------------------------


def test_prompt_json_reports_sources_and_truncation_warnings(outside: Path) -> None:
    import json

    from click.testing import CliRunner

    from hermes_core.cli import cli

    home = outside.parent / "home"
    home.mkdir()
    write(outside / "AGENTS.md", "rule. " * 6_000)
    result = CliRunner().invoke(cli, [
        "--home", str(home), "prompt", "--cwd", str(outside), "--json", "--context-length", "8000",
    ])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["context_files"] == [{
        "path": str(outside / "AGENTS.md"), "rank": 2.0, "loader": "agents_md",
        "chars": 35_999, "kept_chars": data["context_files"][0]["kept_chars"], "truncated": True,
    }]
    assert 0 < data["context_files"][0]["kept_chars"] <= 18_000
    truncations = [w for w in data["warnings"] if w["kind"] == "context_file_truncated"]
    assert [w["path"] for w in truncations] == [str(outside / "AGENTS.md")]
    assert "# Project Context" in data["prompt"] and "read_file" in data["prompt"]


def test_session_never_loads_soul_twice(plugin_host: PluginHost, outside: Path) -> None:
    from hermes_core import Session

    home = outside.parent / "home"
    write(home / "SOUL.md", "I am a very particular soul.")
    write(outside / "AGENTS.md", "agents rules")
    session = Session.open(cwd=outside, home=home, config=Config(), host=plugin_host, persist=False)
    try:
        prompt = session.system_prompt
    finally:
        session.close()
    assert prompt.count("I am a very particular soul.") == 1
    assert "agents rules" in prompt


# --- where the project is: looked up once per build, again by the next build ------------------


def _count_git_root_lookups(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    from hermes_plugins.context_files import search

    calls: list[Path] = []
    real = search.find_git_root

    def counting(start: Path) -> Path | None:
        calls.append(start)
        return real(start)

    monkeypatch.setattr(search, "find_git_root", counting)
    return calls


def test_a_build_locates_the_project_once(
    plugin_host: PluginHost, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_git_root_lookups(monkeypatch)
    block, _ = build(plugin_host, outside)
    assert block is None  # every built-in loader looked, none found a file
    assert calls == [outside.resolve()]  # was once per loader (four)
    build(plugin_host, outside)
    assert len(calls) == 2  # a new build looks again


def test_where_the_project_is_is_shared_only_through_the_locations_passed(
    outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugins.context_files.search import Locations, project

    calls = _count_git_root_lookups(monkeypatch)
    ctx = context(None, outside)
    first, second = project(ctx, "a"), project(ctx, "b")
    assert first is not None and second is not None and first.cwd == second.cwd == outside.resolve()
    assert len(calls) == 2  # nothing passed: each call locates afresh, nothing is remembered
    locations = Locations()
    assert project(ctx, "a", locations) == first and len(calls) == 3
    assert project(ctx, "b", locations) == second and len(calls) == 3  # the same build's answer
    assert project(ctx, "a", Locations()) == first and len(calls) == 4  # another build's: afresh


def test_a_third_party_loader_locating_on_its_own_sees_the_same_project(
    plugin_host: PluginHost, register_plugin: Register, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hermes_plugins.context_files.search import project

    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    cwd = root / "pkg"
    write(root / "NOTES.md", "root notes")
    cwd.mkdir()

    def load(ctx: PromptContext) -> tuple[ContextFile, ...]:
        found = project(ctx, "notes")  # the record's one-argument call: no build's locations
        text = None if found is None else found.read(found.root / "NOTES.md")
        return () if text is None else (ContextFile(path=text.path, label="NOTES.md", text=text.head),)

    register_plugin(loader_plugin(name="notes", rank=0.5, load=load), "notes")
    calls = _count_git_root_lookups(monkeypatch)
    block, _ = build(plugin_host, cwd)
    assert block is not None and "root notes" in block.text
    assert calls == [cwd.resolve()]  # located once, by the third party's own call


def test_a_repository_created_between_builds_is_seen(plugin_host: PluginHost, tmp_path: Path) -> None:
    root = tmp_path / "work"
    cwd = root / "pkg"
    cwd.mkdir(parents=True)
    write(root / "AGENTS.md", "root rules")
    block, _ = build(plugin_host, cwd)
    assert block is None  # outside a repository only cwd is searched
    (root / ".git").mkdir()
    block, _ = build(plugin_host, cwd)
    assert block is not None and "root rules" in block.text

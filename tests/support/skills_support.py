"""Helpers shared by the skills tests: write skill trees, age them, build contexts."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hermes_core import Config, PluginHost, PromptContext

SKILL_TOOLS = frozenset({"skill_view", "skills_list", "skill_manage"})
HOUR_NS = 3600 * 10**9


def write_skill(
    root: Path,
    rel: str,
    *,
    name: str | None = None,
    description: str | None = "A useful test skill",
    extra: str = "",
    body: str = "Steps.\n",
    raw: str | bytes | None = None,
) -> Path:
    """Write ``<root>/<rel>/SKILL.md``; ``name`` defaults to the last path part."""
    directory = root / rel
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    if raw is not None:
        if isinstance(raw, bytes):
            path.write_bytes(raw)
        else:
            path.write_text(raw, encoding="utf-8")
        return path
    lines = [f"name: {name if name is not None else rel.rsplit('/', 1)[-1]}"]
    if description is not None:
        lines.append(f"description: {description}")
    text = "---\n" + "\n".join(lines) + ("\n" + extra.strip("\n") if extra else "") + "\n---\n" + body
    path.write_text(text, encoding="utf-8")
    return path


def write_category(root: Path, rel: str, description: str) -> Path:
    path = root / rel / "DESCRIPTION.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ndescription: {description}\n---\n", encoding="utf-8")
    return path


def age(root: Path, *, hours: float = 1.0) -> None:
    """Set every mtime under ``root`` (and ``root``) back, as for skills not edited just now.

    A snapshot is not trusted for files changed within seconds of its scan (coarse
    timestamps), so tests that expect it to be re-used age the tree first.
    """
    when = time.time_ns() - int(hours * HOUR_NS)
    for directory, _dirs, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(directory, name), ns=(when, when))
        os.utime(directory, ns=(when, when))


def touch(path: Path, *, hours_ago: float) -> None:
    when = time.time_ns() - int(hours_ago * HOUR_NS)
    os.utime(path, ns=(when, when))


def skills_host() -> PluginHost:
    """A fresh host with only the skills plugin: its caches start empty, as in a new process."""
    from hermes_plugins.skills import plugin

    return PluginHost.create(load_entry_points=False, plugins=[(plugin, "skills")])


def make_ctx(
    home: Path,
    *,
    tools: Iterable[str] = SKILL_TOOLS,
    toolsets: Iterable[str] = (),
    config: Config | None = None,
    platform: str = "",
    env: Mapping[str, str] | None = None,
    compact: Iterable[str] = (),
    context_length: int | None = None,
    host: Any = None,
    backend: str = "local",
) -> PromptContext:
    return PromptContext(
        cwd=home,
        home=home,
        config=config or Config(),
        tools=frozenset(tools),
        toolsets=frozenset(toolsets),
        platform=platform,
        env=dict(env or {}),
        compact_skill_categories=frozenset(compact),
        context_length=context_length,
        host=host,
        backend=backend,
    )


def index_lines(text: str) -> list[str]:
    """The lines between <available_skills> and </available_skills>."""
    lines = text.split("\n")
    return lines[lines.index("<available_skills>") + 1 : lines.index("</available_skills>")]

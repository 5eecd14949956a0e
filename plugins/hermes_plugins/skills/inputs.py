"""What a session's skills index is built from: its skill directories and every other input.

``request_for`` is read by the plugin's hooks and by ``hermes-ctx skills`` alike; it sits here,
below both, so that the plugin (which registers the command) and the command do not import
each other. ``SkillsState`` is what the plugin remembers per host: the index LRU and the
resolved source lists.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping, Sequence

from hermes_core.plugin import PromptContext, SkillSource, max_read_bytes
from hermes_plugins._common.terminal import terminal_backend
from hermes_plugins.skills.cache import IndexCache
from hermes_plugins.skills.filters import (
    current_environments,
    disabled_names,
    is_termux,
    session_platform,
)
from hermes_plugins.skills.index import IndexRequest, IndexResult, SourceKey, budget_for
from hermes_plugins.skills.settings import SKILLS

LOCAL_PRECEDENCE = 0
EXTERNAL_PRECEDENCE = 50

_VAR = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
#: Resolved source lists kept per host (the key is a session's home, external dirs and HOME).
SOURCES_MEMO_SIZE = 64


class SkillsState:
    """What the skills plugin remembers, one per plugin host (``host.state(SkillsState)``)."""

    __slots__ = ("index", "sources")

    def __init__(self) -> None:
        self.index: IndexCache[IndexResult] = IndexCache()
        self.sources: dict[tuple[str, tuple[str, ...], str | None], tuple[SkillSource, ...]] = {}


def default_sources(ctx: PromptContext) -> tuple[SkillSource, ...]:
    """``<home>/skills`` plus ``skills.external_dirs``: ``~`` and ``${VAR}`` expanded (from the
    session's environment), relative entries taken against HERMES_HOME, blanks and duplicates
    skipped. A directory that does not exist is skipped, with a warning, when it is scanned.

    Pure string work (no system call), memoised when no entry depends on the environment.
    """
    home = os.fspath(ctx.home)
    external = ctx.config.section(SKILLS).external_dirs
    # ``~`` follows the process's HOME (os.path.expanduser), so HOME is part of the key.
    memo_key = None if any("$" in entry for entry in external) else (home, external, os.environ.get("HOME"))
    if memo_key is None or ctx.host is None:
        return _resolve_sources(home, external, ctx.env)
    state: SkillsState = ctx.host.state(SkillsState)  # ctx.host is typed Any (records sit below the host)
    memo = state.sources
    known = memo.get(memo_key)
    if known is not None:
        return known
    sources = _resolve_sources(home, external, ctx.env)
    if len(memo) >= SOURCES_MEMO_SIZE:
        memo.clear()
    memo[memo_key] = sources
    return sources


def _resolve_sources(home: str, external: tuple[str, ...], env: Mapping[str, str]) -> tuple[SkillSource, ...]:
    local = os.path.normpath(os.path.join(home, "skills"))
    out = [SkillSource(path=local, label="local", precedence=LOCAL_PRECEDENCE, snapshot=True)]
    seen = {local}
    for raw in external:
        text = raw.strip()
        if not text:
            continue
        text = os.path.expanduser(_expand_vars(text, env))
        path = os.path.normpath(os.path.join(home, text))
        if path in seen:
            continue
        seen.add(path)
        out.append(SkillSource(path=path, label="external", precedence=EXTERNAL_PRECEDENCE))
    return tuple(out)


def _expand_vars(text: str, env: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return env.get(name, match.group(0))

    return _VAR.sub(value, text) if "$" in text else text


def request_for(ctx: PromptContext, sources: Sequence[SkillSource] | None = None) -> IndexRequest:
    """The index inputs of a session: every value the rendered block depends on."""
    if sources is None:
        sources = ctx.host.skill_sources(ctx) if ctx.host is not None else default_sources(ctx)
    env = ctx.env
    platform = session_platform(ctx.platform, env)
    config = ctx.config.section(SKILLS)
    return IndexRequest(
        sources=tuple(
            SourceKey(os.fspath(s.path), s.label, s.precedence, s.snapshot) for s in sources
        ),
        home=os.fspath(ctx.home),
        tools=ctx.tools,
        toolsets=ctx.toolsets,
        platform=platform,
        os_platform=sys.platform,
        termux=is_termux(env),
        environments=current_environments(terminal_backend(ctx), env, ctx.tools),
        disabled=disabled_names(config.disabled, config.platform_disabled, platform),
        compact=ctx.compact_skill_categories,
        budget=budget_for(config.index_max_tokens, ctx.context_length),
        max_file_bytes=max_read_bytes(ctx.config),
        hermes_pointer=ctx.default_identity,
    )

"""The built-in ``skills`` plugin: skill directories, the skills index block, ``hermes-ctx skills``.

* ``hermes_skills_sources`` declares ``$HERMES_HOME/skills`` (snapshotted) and
  ``skills.external_dirs``; other plugins add directories through the same hook.
* ``hermes_prompt_skills_index`` renders the ``## Skills (mandatory)`` block when the session
  has a skills tool, served from the host's LRU when the same inputs were seen before.
* ``hermes_cli_register_commands`` adds ``hermes-ctx skills``.

The caches belong to the plugin host (``SkillsState``); call ``invalidate(host)`` after
changing skills from inside this process.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from hermes_core import (
    PromptBlock,
    PromptContext,
    SkillSource,
    hookimpl,
    record_warning,
)
from hermes_core.config import ConfigSection
from hermes_core.files import max_read_bytes
from hermes_core.host import host_state
from hermes_plugins.skills.cache import IndexCache
from hermes_plugins.skills.settings import SKILLS, SkillsSection
from hermes_plugins.skills.filters import (
    current_environments,
    disabled_names,
    is_termux,
    session_platform,
)
from hermes_plugins.skills.index import (
    PLUGIN,
    IndexRequest,
    IndexResult,
    IndexWarning,
    SourceKey,
    budget_for,
    build_index,
)

#: The index is offered only to sessions that can act on it.
SKILL_TOOLS = frozenset({"skills_list", "skill_view", "skill_manage"})
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


def invalidate(host: Any) -> None:
    """Forget every index ``host`` cached (call after adding or editing skills)."""
    if host is not None:
        host.state(SkillsState).index.invalidate()


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
        environments=current_environments(ctx.backend, env, ctx.tools),
        disabled=disabled_names(config.disabled, config.platform_disabled, platform),
        compact=ctx.compact_skill_categories,
        budget=budget_for(config.index_max_tokens, ctx.context_length),
        max_file_bytes=max_read_bytes(ctx.config),
        hermes_pointer=ctx.default_identity,
    )


def index_for(
    request: IndexRequest, max_age: float | None = None, cache: IndexCache[IndexResult] | None = None
) -> IndexResult:
    """The index for ``request``: from ``cache`` (entries younger than ``max_age`` seconds),
    else built (and then cached). Without a cache it is built every time.

    Records the index's warnings for the build in progress - again on every hit, so every
    session that shows this index can show its warnings too.
    """
    if cache is None:
        cache = IndexCache()
    result = cache.get(request, max_age)
    if result is None:
        generation = cache.generation
        result = build_index(request)
        _report(result.events)
        if result.events:
            result = attrs.evolve(result, events=())
        cache.put(request, result, generation)
    if result.warnings:
        _report(result.warnings)
    return result


def _report(warnings: Iterable[IndexWarning]) -> None:
    for warning in warnings:
        details: dict[str, Any] = dict(warning.details)
        record_warning(warning.kind, warning.message, plugin=PLUGIN, path=warning.path, **details)


@hookimpl
def hermes_config_sections() -> ConfigSection[SkillsSection]:
    return SKILLS


@hookimpl(trylast=True)
def hermes_skills_sources(ctx: PromptContext) -> tuple[SkillSource, ...]:
    return default_sources(ctx)


@hookimpl(trylast=True)
def hermes_prompt_skills_index(ctx: PromptContext) -> PromptBlock | tuple[()]:
    if SKILL_TOOLS.isdisjoint(ctx.tools):
        return ()
    cache = host_state(ctx.host, SkillsState).index
    result = index_for(request_for(ctx), ctx.config.section(SKILLS).index_ttl_seconds, cache)
    return result.block if result.block is not None else ()


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.skills.cli import skills_command

    cli.add_command(skills_command)

"""The built-in ``skills`` plugin: skill directories, the skills index block, ``hermes-ctx skills``.

* ``hermes_skills_sources`` declares ``$HERMES_HOME/skills`` (snapshotted) and
  ``skills.external_dirs``; other plugins add directories through the same hook.
* ``hermes_prompt_skills_index`` renders the ``## Skills (mandatory)`` block when the session
  has a skills tool, served from the host's LRU when the same inputs were seen before.
* ``hermes_cli_register_commands`` adds ``hermes-ctx skills``.

The caches belong to the plugin host (``SkillsState``, in ``inputs.py`` with ``request_for``,
the index inputs the command reads too); call ``invalidate(host)`` after changing skills from
inside this process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import attrs

from hermes_core.plugin import (
    ConfigSection,
    PromptBlock,
    PromptContext,
    SkillSource,
    hookimpl,
    host_state,
    record_warning,
)
from hermes_plugins._common.screening import findings
from hermes_plugins.skills.cache import IndexCache
from hermes_plugins.skills.index import (
    PLUGIN,
    IndexRequest,
    IndexResult,
    IndexWarning,
    build_index,
)
from hermes_plugins.skills.inputs import SkillsState, default_sources, request_for
from hermes_plugins.skills.screen import Scan
from hermes_plugins.skills.settings import SKILLS, SkillsSection

#: The index is offered only to sessions that can act on it.
SKILL_TOOLS = frozenset({"skills_list", "skill_view", "skill_manage"})


def invalidate(host: Any) -> None:
    """Forget every index ``host`` cached (call after adding or editing skills)."""
    if host is not None:
        host.state(SkillsState).index.invalidate()


def index_for(
    request: IndexRequest, max_age: float | None = None, cache: IndexCache[IndexResult] | None = None,
    scan: Scan | None = None,
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
        result = build_index(request) if scan is None else build_index(request, scan=scan)
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
    # the cache belongs to this host, and so do the scanners: the screened index is what it keeps
    scanners = ctx.host is not None and ctx.host.pm.hook.hermes_context_scan.get_hookimpls()
    scan = functools.partial(findings, ctx, source="skills index") if scanners else None
    result = index_for(request_for(ctx), ctx.config.section(SKILLS).index_ttl_seconds, cache, scan)
    return result.block if result.block is not None else ()


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.skills.cli import skills_command

    cli.add_command(skills_command)

"""Build the skills index for one set of inputs: load every source, filter, merge, render.

``IndexRequest`` is everything the result depends on besides the files themselves; it is also
the LRU key. ``load_sources`` gets each source's skills from the disk snapshot when its manifest
still matches, else by scanning (and then rewrites the snapshot); ``select`` applies every
filter and the precedence between sources; ``build_index`` renders and collects the warnings
that every build - cached or not - reports again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from operator import itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple

import attrs

from hermes_core.plugin import DEFAULT_MAX_BYTES, PromptBlock, get_logger
from hermes_plugins.skills.discovery import Progress, SourceScan, scan_source
from hermes_plugins.skills.filters import hidden_reason
from hermes_plugins.skills.metadata import ROW_CONDITIONS, ROW_DIR, ROW_NAME
from hermes_plugins.skills.render import Rendered, render_index
from hermes_plugins.skills.screen import Scan, screen_groups
from hermes_plugins.skills.snapshot import (
    entry_from_scan,
    is_current,
    load_snapshot,
    scan_from_entry,
    snapshot_path,
    write_snapshot,
)

log = get_logger("hermes_plugins.skills")

PLUGIN = "skills"
BLOCK_NAME = "skills_index"
#: Default index budget when ``skills.index_max_tokens`` is unset: this share of the window.
DEFAULT_BUDGET_SHARE = 0.02


class SourceKey(NamedTuple):
    path: str
    label: str
    precedence: int
    snapshot: bool


class IndexRequest(NamedTuple):
    """The inputs of one index; hashable, so it is the LRU key as it stands."""

    sources: tuple[SourceKey, ...]
    home: str
    tools: frozenset[str] | None
    toolsets: frozenset[str] | None
    platform: str
    os_platform: str
    termux: bool
    environments: frozenset[str]
    disabled: frozenset[str]
    compact: frozenset[str]
    budget: int | None
    #: ``files.max_read_bytes``: the most bytes read from one skill file.
    max_file_bytes: int = DEFAULT_MAX_BYTES
    #: The prompt's identity is hermes-core's own: the pointer to the hermes-agent skill for
    #: questions about Hermes may be given (never beside a host's own identity).
    hermes_pointer: bool = True


@attrs.frozen(kw_only=True)
class IndexWarning:
    """A warning kept with a built index, reported again by every build that uses it."""

    kind: str
    message: str
    path: str | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class IndexResult:
    """A built index: the block (``None`` when no skill is visible) and its warnings.

    ``warnings`` describe the index (a broken skill, a collapsed category) and are reported by
    every build that uses it, cached or not; ``events`` happened while building it (an unusable
    snapshot was replaced) and are reported once.
    """

    block: PromptBlock | None
    warnings: tuple[IndexWarning, ...] = ()
    events: tuple[IndexWarning, ...] = ()


@attrs.define(kw_only=True, eq=False)
class Loaded:
    source: SourceKey
    scan: SourceScan
    origin: str  # "snapshot" or "scan"


@attrs.define(kw_only=True, eq=False)
class Selection:
    groups: dict[str, list[list[Any]]]
    categories: dict[str, str]
    shown: int = 0
    hidden: int = 0
    #: with ``explain``: (source, row, reason or None) for every skill
    verdicts: list[tuple[SourceKey, list[Any], str | None]] = attrs.field(factory=list)


def budget_for(configured: int | None, context_length: int | None) -> int | None:
    if configured is not None:
        return configured
    if context_length:
        return max(1, int(context_length * DEFAULT_BUDGET_SHARE))
    return None


def load_sources(
    sources: Sequence[SourceKey],
    home: str,
    *,
    progress: Progress | None = None,
    use_snapshot: bool = True,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> tuple[list[Loaded], list[list[str]]]:
    """Every source's skills, from the snapshot when it is current, else from a scan.

    Returns the loaded sources and the snapshot's own problems (``[kind, message, path]``).
    """
    problems: list[list[str]] = []
    snapshotted = [s for s in sources if s.snapshot]
    path = snapshot_path(home)
    entries: dict[str, Any] = {}
    if snapshotted and use_snapshot:
        entries, problem = load_snapshot(path)
        if problem is not None:
            problems.append(problem)
    keep: dict[str, Any] = {}
    dirty = False
    loaded: list[Loaded] = []
    for source in sources:
        root = source.path
        if source.snapshot:
            entry = entries.get(root)
            if entry is not None and is_current(entry, root):
                loaded.append(Loaded(source=source, scan=scan_from_entry(root, entry), origin="snapshot"))
                keep[root] = entry
                continue
        scan = scan_source(root, progress=progress, max_bytes=max_bytes)
        if not scan.exists and source.label != "local":
            scan.problem("skills_dir_missing", f"skills directory {root} does not exist; skipped", root)
        loaded.append(Loaded(source=source, scan=scan, origin="scan"))
        if source.snapshot and scan.exists:
            keep[root] = entry_from_scan(scan)
            dirty = True
    if dirty:
        write_snapshot(path, keep)
    return loaded, problems


def select(loaded: Iterable[Loaded], request: IndexRequest, *, explain: bool = False) -> Selection:
    """Apply every filter and the precedence between sources (lower ``precedence`` wins).

    A category whose skills declare no conditions, none of them disabled or shadowed, is
    taken whole (a slice of the sorted rows); only the others are looked at skill by skill.
    The result's groups are sorted by name, one entry per name.
    """
    groups: dict[str, list[list[Any]]] = {}
    categories: dict[str, str] = {}
    disabled = request.disabled
    claimed: set[str] = set()
    shown = hidden = 0
    verdicts: list[tuple[SourceKey, list[Any], str | None]] = []
    ordered = sorted(loaded, key=lambda item: (item.source.precedence, item.source.path))
    for position, item in enumerate(ordered):
        later = position + 1 < len(ordered)
        rows = item.scan.rows
        for category, start, end, flags in item.scan.groups:
            chunk = rows[start:end]
            if (
                explain
                or flags
                or (disabled and _any_named(chunk, disabled))
                or (claimed and _any_claimed(chunk, claimed))
            ):
                chunk = _filter(item.source, chunk, request, claimed, verdicts if explain else None)
            hidden += end - start - len(chunk)
            if not chunk:
                continue
            shown += len(chunk)
            existing = groups.get(category)
            if existing is None:
                groups[category] = chunk
            else:
                merged = existing + chunk
                merged.sort(key=_NAME)
                groups[category] = merged
        if later:
            claimed.update(row[ROW_NAME] for chunk in groups.values() for row in chunk)
        for category, description in item.scan.categories.items():
            categories.setdefault(category, description)
    return Selection(
        groups=groups, categories=categories, shown=shown, hidden=hidden, verdicts=verdicts
    )


_NAME = itemgetter(ROW_NAME)


def _any_named(chunk: list[list[Any]], names: frozenset[str]) -> bool:
    return any(row[ROW_NAME] in names or row[ROW_DIR] in names for row in chunk)


def _any_claimed(chunk: list[list[Any]], claimed: set[str]) -> bool:
    return any(row[ROW_NAME] in claimed for row in chunk)


def _filter(
    source: SourceKey,
    chunk: list[list[Any]],
    request: IndexRequest,
    claimed: set[str],
    verdicts: list[tuple[SourceKey, list[Any], str | None]] | None,
) -> list[list[Any]]:
    visible: list[list[Any]] = []
    last = None
    disabled = request.disabled
    for row in chunk:
        reason = None
        conditions = row[ROW_CONDITIONS]
        if conditions is not None:
            reason = hidden_reason(
                conditions, tools=request.tools, toolsets=request.toolsets,
                os_platform=request.os_platform, termux=request.termux,
                environments=request.environments,
            )
        name = row[ROW_NAME]
        if reason is None and (name in disabled or row[ROW_DIR] in disabled):
            reason = "disabled"
        if reason is None and name in claimed:
            reason = "shadowed"
        if reason is None and name == last:
            reason = "duplicate"
        if verdicts is not None:
            verdicts.append((source, row, reason))
        if reason is None:
            visible.append(row)
            last = name
    return visible


def build_index(
    request: IndexRequest, *, progress: Progress | None = None, scan: Scan | None = None
) -> IndexResult:
    """Load, filter and render; never raises for anything found on disk. With ``scan`` (the
    prompt-injection scanners), every line of the index is screened first (``screen``)."""
    loaded, problems = load_sources(
        request.sources, request.home, progress=progress, max_bytes=request.max_file_bytes
    )
    try:
        selection, rendered, found = _compose(loaded, request, scan)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError):
        # Only a snapshot that parses but does not hold what we wrote can get here.
        if all(item.origin == "scan" for item in loaded):
            raise
        path = snapshot_path(request.home)
        problems.append(
            ["skills_snapshot_ignored", f"skills snapshot {path} holds malformed entries; rebuilding it", path]
        )
        loaded, _ = load_sources(
            request.sources, request.home, progress=progress, use_snapshot=False,
            max_bytes=request.max_file_bytes,
        )
        selection, rendered, found = _compose(loaded, request, scan)
    events = [IndexWarning(kind=k, message=m, path=p) for k, m, p in problems]
    warnings = found + _budget_warnings(rendered, request.budget)
    block = None
    if rendered.text:
        origins = sorted({item.origin for item in loaded if item.scan.exists})
        block = PromptBlock(
            name=BLOCK_NAME,
            text=rendered.text,
            meta=MappingProxyType({
                "skills": rendered.skills,
                "hidden": selection.hidden,
                "categories": len(selection.groups),
                "compacted": tuple(rendered.compacted),
                "collapsed": tuple(rendered.collapsed),
                "tokens_estimate": rendered.tokens,
                "budget": request.budget,
                "origin": origins[0] if len(origins) == 1 else "mixed",
                "sources": tuple(s.path for s in request.sources),
            }),
        )
    log.debug(
        "skills_index_built", skills=rendered.skills, hidden=selection.hidden,
        origin=[item.origin for item in loaded], tokens=rendered.tokens,
    )
    return IndexResult(block=block, warnings=tuple(warnings), events=tuple(events))


def _compose(
    loaded: list[Loaded], request: IndexRequest, scan: Scan | None = None
) -> tuple[Selection, Rendered, list[IndexWarning]]:
    found = [
        IndexWarning(kind=str(k), message=str(m), path=str(p))
        for item in loaded
        for k, m, p in item.scan.problems
    ]
    selection = select(loaded, request)
    if scan is not None:
        roots = [source.path for source in request.sources]
        groups, categories, screened = screen_groups(selection.groups, selection.categories, scan, roots)
        selection = attrs.evolve(selection, groups=groups, categories=categories)
        found += [IndexWarning(kind=k, message=m, path=p, details=d) for k, m, p, d in screened]
    rendered = render_index(
        selection.groups,
        selection.categories,
        compact=request.compact,
        budget=request.budget,
        manage=request.tools is None or "skill_manage" in request.tools,
        hermes_pointer=request.hermes_pointer,
    )
    return selection, rendered, found


def _budget_warnings(rendered: Rendered, budget: int | None) -> list[IndexWarning]:
    out: list[IndexWarning] = []
    if rendered.collapsed:
        out.append(IndexWarning(
            kind="skills_index_collapsed",
            message=(
                f"the skills index is over its budget of {budget} tokens; these categories are "
                f"listed by name only: {', '.join(rendered.collapsed)}"
            ),
            details={"collapsed": tuple(rendered.collapsed), "budget": budget, "tokens": rendered.tokens},
        ))
    if rendered.over_budget:
        out.append(IndexWarning(
            kind="skills_index_over_budget",
            message=(
                f"the skills index is still ~{rendered.tokens} tokens with every category listed "
                f"by name only (budget {budget}); skill names are never dropped"
            ),
            details={"budget": budget, "tokens": rendered.tokens},
        ))
    return out


"""The ``context_files`` block: one project context source, framed under ``# Project Context``.

The loaders (``hermes_context_file_loaders``) are tried by ascending rank and the first that
finds any file wins; the others are never called, because two instruction files that disagree
do more harm than one that is missing. Each file is sized to the window (see ``sizing``); a
file a loader returned unsized (a third party's) is sized here. When SOUL.md is not the
identity (another plugin replaced it) it is appended, as the reference does.

``PromptBlock.meta["sources"]`` reports, per file, ``path``, ``rank``, ``loader``, ``chars``,
``kept_chars``, ``truncated`` and ``blocked``: exactly what the model got. A file in which the
scanners (``hermes_context_scan``) find prompt injection is replaced by a placeholder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from hermes_core.plugin import (
    ConfigSection,
    ContextFile,
    ContextFileLoader,
    PromptBlock,
    PromptContext,
    get_logger,
    hookimpl,
    record_warning,
)
from hermes_plugins._common.screening import findings, flagged_soul, screen_file
from hermes_plugins.context_files import agents_md, claude_md, cursorrules, hermes_md
from hermes_plugins.context_files.reading import FileText, read_candidate
from hermes_plugins.context_files.search import Locations
from hermes_plugins.context_files.sizing import CONTEXT_FILES, ContextFileKeys, fit, max_chars_for, read_timeout, share

log = get_logger(__name__)

NAME = "context_files"
HEADER = "# Project Context"
PREAMBLE = (
    "The files below come from the project you are working in; follow their instructions "
    "where they apply to the task."
)
SOUL_LOADER = "soul"
SOUL_NAME = "SOUL.md"

#: The built-in loaders' ``load``: each also takes the build's ``Locations``.
_SHARING: tuple[Callable[[PromptContext, Locations | None], tuple[ContextFile, ...]], ...] = (
    hermes_md.load, agents_md.load, claude_md.load, cursorrules.load,
)


def builtin_loaders(ctx: PromptContext) -> list[ContextFileLoader]:
    """The four built-in loaders by rank, for a context built without a host."""
    loaders = [m.hermes_context_file_loaders(ctx) for m in (hermes_md, agents_md, claude_md, cursorrules)]
    return sorted(loaders, key=lambda loader: (loader.rank, loader.name))


def _loaders(ctx: PromptContext) -> list[ContextFileLoader]:
    if ctx.host is None:
        return builtin_loaders(ctx)
    return list(ctx.host.context_file_loaders(ctx))


def _load(loader: ContextFileLoader, ctx: PromptContext, locations: Locations) -> Any:
    """A built-in loader shares the build's ``locations``; any other is called as the record
    documents, ``load(ctx)`` (``search.project(ctx, name)`` then locates on its own)."""
    given: object = loader.load  # typed as the record's one-argument callable
    for load in _SHARING:
        if given is load:
            return load(ctx, locations)
    return loader.load(ctx)


def _first_found(ctx: PromptContext) -> tuple[ContextFileLoader | None, tuple[ContextFile, ...]]:
    locations = Locations()  # this build's: the built-in loaders locate the project once
    for loader in _loaders(ctx):
        try:
            result = _load(loader, ctx, locations) or ()
            files = (result,) if isinstance(result, ContextFile) else tuple(result)
        except Exception as exc:  # one broken loader must not cost the prompt
            if getattr(ctx.host, "strict", False):
                raise  # --strict-plugins: plugin authors want the traceback
            record_warning(
                "context_file_loader_failed",
                f"context-file loader {loader.name!r} failed: {type(exc).__name__}: {exc}; "
                "the next loader was tried",
                plugin=loader.name, error=f"{type(exc).__name__}: {exc}",
            )
            continue
        files = tuple(f for f in files if isinstance(f, ContextFile) and f.text.strip())
        if files:
            log.debug("context_file_loader_won", loader=loader.name, rank=loader.rank,
                      files=len(files))
            return loader, files
    return None, ()


def _size(files: Sequence[ContextFile], loader: ContextFileLoader, max_chars: int) -> list[ContextFile]:
    """Fill in rank and loader; cut files the loader left over-long to their share of the cap."""
    already = sum(f.kept_chars for f in files if f.truncated)
    unsized = [i for i, f in enumerate(files) if not f.truncated]
    budgets = share([len(files[i].text) for i in unsized], max_chars - already)
    out = [
        attrs.evolve(f, loader=loader.name, rank=loader.rank, label=f.label or f.path.name)
        for f in files
    ]
    for index, budget in zip(unsized, budgets, strict=True):
        original = out[index]
        text = FileText(path=original.path, head=original.text, chars=len(original.text))
        cut, truncated = fit(text, budget, label=original.label, loader=loader.name,
                             max_chars=max_chars)
        if truncated:
            out[index] = attrs.evolve(original, text=cut.text, chars=cut.total_chars,
                                      kept_chars=cut.kept_chars, truncated=True)
        elif original.chars < len(original.text) or original.kept_chars != len(original.text):
            out[index] = attrs.evolve(original, chars=max(original.chars, len(original.text)),
                                      kept_chars=len(original.text))
    return out


def _soul(ctx: PromptContext, max_chars: int) -> ContextFile | None:
    """SOUL.md from HERMES_HOME (never from cwd), when it is not already the identity."""
    if ctx.soul_loaded:
        return None
    path = ctx.home / SOUL_NAME
    text = read_candidate(path, max_chars=max_chars, plugin=NAME, timeout=read_timeout(ctx))
    if text is None:
        return None
    cut, truncated = fit(text, max_chars, label=SOUL_NAME, loader=NAME, max_chars=max_chars)
    return ContextFile(
        path=path, label=SOUL_NAME, text=cut.text, loader=SOUL_LOADER, rank=0.0,
        chars=cut.total_chars, kept_chars=cut.kept_chars, truncated=truncated,
    )


def render(files: Sequence[ContextFile], soul: ContextFile | None = None) -> str:
    """The block text: header, preamble, one ``## <label>`` section per file, then SOUL.md."""
    sections = [f"## {f.label}\n\n{f.text.strip()}" for f in files]
    if soul is not None:
        sections.append(soul.text.strip())  # SOUL.md goes in bare, as the identity would
    return "\n\n".join([HEADER, PREAMBLE, *sections])


def _source(f: ContextFile) -> dict[str, Any]:
    return {
        "path": str(f.path), "rank": float(f.rank), "loader": f.loader, "chars": f.chars,
        "kept_chars": f.kept_chars, "truncated": f.truncated, "blocked": list(f.blocked),
        # only when the scan acted, so a clean file's report keeps its shape
        **({"blocked_lines": [dict(b) for b in f.blocked_lines]} if f.blocked_lines else {}),
        **({"flagged": list(f.flagged)} if f.flagged else {}),
    }


def _scanned(ctx: PromptContext, f: ContextFile) -> ContextFile:
    """The file with its offending lines replaced by markers, or its placeholder when a
    finding spans lines (spec §9.4, with the severities of ``hermes_plugins._common.screening``)."""
    screened = screen_file(ctx, f.text, f.label, path=str(f.path))
    if screened.blocked_file:
        return attrs.evolve(f, text=screened.text, kept_chars=0, truncated=False,
                            blocked=screened.blocked_file, flagged=screened.flagged)
    if not screened.blocked_lines and not screened.flagged:
        return f
    ids = tuple(dict.fromkeys(i for b in screened.blocked_lines for i in b["findings"]))
    return attrs.evolve(f, text=screened.text, kept_chars=len(screened.text), blocked=ids,
                        blocked_lines=screened.blocked_lines, flagged=screened.flagged)


@hookimpl
def hermes_config_sections() -> ConfigSection[ContextFileKeys]:
    return CONTEXT_FILES


@hookimpl(trylast=True)
def hermes_prompt_context_files(ctx: PromptContext) -> PromptBlock | tuple[PromptBlock, ...]:
    max_chars = max_chars_for(ctx)
    loader, found = _first_found(ctx)
    files = _size(found, loader, max_chars) if loader is not None else []
    files = [_scanned(ctx, f) for f in files]
    soul = _soul(ctx, max_chars)
    if soul is not None:
        ids = findings(ctx, soul.text, SOUL_NAME)
        if ids:
            flagged_soul(ids, path=str(soul.path))
    if not files and soul is None:
        return ()
    sources = [*files, *([soul] if soul is not None else [])]
    return PromptBlock(
        name=NAME,
        text=render(files, soul),
        source=str(sources[0].path),
        meta={
            "sources": [_source(f) for f in sources],
            "loader": loader.name if loader is not None and files else None,
            "max_chars": max_chars,
        },
    )

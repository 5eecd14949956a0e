"""Loader ``claude_md`` (rank 3): ``CLAUDE.md``, else ``claude.md``, in cwd only."""

from __future__ import annotations

from hermes_core.plugin import ContextFile, ContextFileLoader, PromptContext, hookimpl
from hermes_plugins.context_files.search import Locations, project
from hermes_plugins.context_files.sizing import fit_files

NAME = "claude_md"
RANK = 3.0
CANDIDATES = ("CLAUDE.md", "claude.md")


def load(ctx: PromptContext, locations: Locations | None = None) -> tuple[ContextFile, ...]:
    found = project(ctx, NAME, locations)
    if found is None:
        return ()
    text = found.read_first(found.cwd, CANDIDATES)
    if text is None:
        return ()
    return fit_files([text], [found.label(text.path, found.cwd)], max_chars=found.max_chars,
                     loader=NAME)


@hookimpl(trylast=True)
def hermes_context_file_loaders(ctx: PromptContext) -> ContextFileLoader:
    return ContextFileLoader(
        name=NAME, rank=RANK, load=load, patterns=CANDIDATES,
        description="CLAUDE.md / claude.md in cwd",
    )

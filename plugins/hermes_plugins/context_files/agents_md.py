"""Loader ``agents_md`` (rank 2): the AGENTS.md chain from the git root down to cwd.

Every directory on the way contributes its own file, root first, so the most specific
instructions come last. In a directory ``AGENTS.override.md`` takes the place of ``AGENTS.md``
(then ``agents.md``). Each part is labelled with its path relative to the root. A file already
in the chain (the same file through a link, or the same content) is not repeated. Outside a
repository only cwd is searched.
"""

from __future__ import annotations

from hermes_core.plugin import ContextFile, ContextFileLoader, PromptContext, hookimpl
from hermes_plugins.context_files.reading import FileText
from hermes_plugins.context_files.search import Locations, project
from hermes_plugins.context_files.sizing import fit_files

NAME = "agents_md"
RANK = 2.0
CANDIDATES = ("AGENTS.override.md", "AGENTS.md", "agents.md")


def load(ctx: PromptContext, locations: Locations | None = None) -> tuple[ContextFile, ...]:
    found = project(ctx, NAME, locations)
    if found is None:
        return ()
    parts: list[FileText] = []
    seen_files: set[tuple[int, int]] = set()
    seen_texts: set[tuple[str, str, int]] = set()
    for directory in found.downward():
        text = found.read_first(directory, CANDIDATES)
        if text is None or text.identity in seen_files or text.key in seen_texts:
            continue
        seen_files.add(text.identity)
        seen_texts.add(text.key)
        parts.append(text)
    return fit_files(parts, [found.label(p.path) for p in parts], max_chars=found.max_chars,
                     loader=NAME)


@hookimpl(trylast=True)
def hermes_context_file_loaders(ctx: PromptContext) -> ContextFileLoader:
    return ContextFileLoader(
        name=NAME, rank=RANK, load=load, patterns=CANDIDATES,
        description="AGENTS.md in every directory from the git root down to cwd "
        "(AGENTS.override.md replaces it)",
    )

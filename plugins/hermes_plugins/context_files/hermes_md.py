"""Loader ``hermes_md`` (rank 1): ``.hermes.md`` or ``HERMES.md``, nearest first, up to the git root.

The search starts in cwd and climbs to the repository root (inclusive); outside a repository
only cwd is searched, so a stray HERMES.md in a home directory never leaks into unrelated work.
In each directory ``.hermes.md`` is preferred to ``HERMES.md``. A leading YAML frontmatter block
is metadata for tools, not instructions for the model, and is dropped.
"""

from __future__ import annotations

from hermes_core.plugin import ContextFile, ContextFileLoader, PromptContext, hookimpl
from hermes_plugins.context_files.search import Locations, project
from hermes_plugins.context_files.sizing import fit_files

NAME = "hermes_md"
RANK = 1.0
CANDIDATES = (".hermes.md", "HERMES.md")
_FENCE = "---"


def strip_frontmatter(text: str) -> str:
    """Drop a leading ``---`` ... ``---`` block; unchanged when unclosed or when nothing follows."""
    body = text.removeprefix("\ufeff")
    if not body.startswith((_FENCE + "\n", _FENCE + "\r\n")):
        return text
    lines = body.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == _FENCE:
            rest = "".join(lines[index + 1 :]).lstrip("\r\n")
            return rest if rest.strip() else text
    return text


def load(ctx: PromptContext, locations: Locations | None = None) -> tuple[ContextFile, ...]:
    found = project(ctx, NAME, locations)
    if found is None:
        return ()
    for directory in found.upward():
        text = found.read_first(directory, CANDIDATES, transform=strip_frontmatter)
        if text is not None:
            return fit_files([text], [found.label(text.path)], max_chars=found.max_chars,
                             loader=NAME)
    return ()


@hookimpl(trylast=True)
def hermes_context_file_loaders(ctx: PromptContext) -> ContextFileLoader:
    return ContextFileLoader(
        name=NAME, rank=RANK, load=load, patterns=CANDIDATES,
        description="nearest .hermes.md / HERMES.md from cwd up to the git root",
    )

"""Loader ``cursorrules`` (rank 4): ``.cursorrules`` and ``.cursor/rules/*.mdc`` in cwd only.

Every non-empty file contributes: ``.cursorrules`` first, then the rule files sorted by name.
"""

from __future__ import annotations

import os

from hermes_core.plugin import (
    ContextFile,
    ContextFileLoader,
    PromptContext,
    hookimpl,
    record_warning,
)
from hermes_plugins.context_files.reading import FileText
from hermes_plugins.context_files.search import Locations, Project, project
from hermes_plugins.context_files.sizing import fit_files

NAME = "cursorrules"
RANK = 4.0
RULES_DIR = (".cursor", "rules")
RULE_SUFFIX = ".mdc"


def _rule_names(found: Project) -> list[str]:
    rules = found.cwd.joinpath(*RULES_DIR)
    try:
        names = os.listdir(rules)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        record_warning(
            "context_file_unreadable",
            f"cannot list {rules}: {exc.strerror or exc}; its rule files were skipped",
            plugin=NAME, path=str(rules), error=exc.strerror or str(exc),
        )
        return []
    return sorted(name for name in names if name.endswith(RULE_SUFFIX))


def load(ctx: PromptContext, locations: Locations | None = None) -> tuple[ContextFile, ...]:
    found = project(ctx, NAME, locations)
    if found is None:
        return ()
    paths = [found.cwd / ".cursorrules"]
    paths += [found.cwd.joinpath(*RULES_DIR, name) for name in _rule_names(found)]
    texts: list[FileText] = [t for t in map(found.read, paths) if t is not None]
    return fit_files(texts, [found.label(t.path, found.cwd) for t in texts],
                     max_chars=found.max_chars, loader=NAME)


@hookimpl(trylast=True)
def hermes_context_file_loaders(ctx: PromptContext) -> ContextFileLoader:
    return ContextFileLoader(
        name=NAME, rank=RANK, load=load, patterns=(".cursorrules", ".cursor/rules/*.mdc"),
        description=".cursorrules and .cursor/rules/*.mdc (by name) in cwd",
    )

"""Finding the repository a working directory belongs to."""

from __future__ import annotations

from pathlib import Path


def _has_git(directory: Path) -> bool:
    marker = directory / ".git"
    try:
        # A directory in a normal clone, a file in a worktree or a submodule.
        return marker.is_dir() or marker.is_file()
    except OSError:
        # No permission to look (or a broken mount): treat as "no .git here" and keep looking,
        # so an unreadable directory never stops the prompt from being built.
        return False


def find_git_root(start: Path) -> Path | None:
    """The nearest of ``start`` and its ancestors that holds a ``.git`` entry, else ``None``."""
    for directory in (start, *start.parents):
        if _has_git(directory):
            return directory
    return None

"""Finding the repository a working directory belongs to."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def _has_git(directory: str) -> bool:
    try:
        # One stat per directory (this runs for every ancestor on every build): a directory in
        # a normal clone, a file in a worktree or a submodule.
        mode = os.stat(os.path.join(directory, ".git")).st_mode
    except OSError:
        # Absent, no permission to look, or a broken mount: "no .git here", keep looking, so
        # an unreadable directory never stops the prompt from being built.
        return False
    return stat.S_ISDIR(mode) or stat.S_ISREG(mode)


def find_git_root(start: Path) -> Path | None:
    """The nearest of ``start`` and its ancestors that holds a ``.git`` entry, else ``None``."""
    directory = os.fspath(start)
    while True:
        if _has_git(directory):
            return start if directory == os.fspath(start) else Path(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent

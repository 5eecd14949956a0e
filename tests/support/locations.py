"""Where the tests find the checkout, their data and the shared real sessions.

A test file may sit at any depth under tests/ (they are grouped in folders by area), so no test
counts parent folders from its own ``__file__``: they import these constants instead. The root is
the nearest folder above this module holding the project's pyproject.toml.
"""

from __future__ import annotations

import os
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent
ROOT = next(folder for folder in SUPPORT.parents if (folder / "pyproject.toml").is_file())
TESTS = ROOT / "tests"
#: hand-written fixtures (transcripts, task folders, the injection corpus)
DATA = TESTS / "data"
BENCHMARKS = TESTS / "benchmarks"
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"


def find_real_sessions(repo: Path, override: str | None) -> Path:
    """``override`` when set, else the nearest ``shared/real-sessions`` beside the checkout or
    one of its ancestors (a git worktree sits a level deeper than the main checkout: looking
    only beside it skipped every real-session test in a worktree), else where it would be."""
    if override:
        return Path(override)
    for folder in repo.parents:
        candidate = folder / "shared" / "real-sessions"
        if candidate.is_dir():
            return candidate
    return repo.parent / "shared" / "real-sessions"


#: Real recorded sessions of other agents (third-party data): read in place, never copied into
#: the repository. ``$HERMES_REAL_SESSIONS`` points elsewhere; tests skip when it is absent
#: (the ``real_sessions_dir`` fixture of tests/conftest.py).
REAL_SESSIONS = find_real_sessions(ROOT, os.environ.get("HERMES_REAL_SESSIONS"))

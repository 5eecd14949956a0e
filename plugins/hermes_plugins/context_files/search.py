"""What every built-in loader needs: the project's directories and a first-match file read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from hermes_core import PromptContext
from hermes_core.logging import get_logger
from hermes_plugins.context_files.gitroot import find_git_root
from hermes_plugins.context_files.reading import FileText, read_candidate
from hermes_plugins.context_files.sizing import max_chars_for, read_timeout

log = get_logger(__name__)


@attrs.frozen(kw_only=True)
class Project:
    """Where a build looks: the resolved cwd, its git root, and the settings for reading."""

    cwd: Path
    git_root: Path | None
    max_chars: int
    timeout: float | None
    plugin: str

    @property
    def root(self) -> Path:
        """The repository root, or cwd when there is no repository: nothing is read above it."""
        return self.git_root or self.cwd

    def upward(self) -> list[Path]:
        """cwd, then each parent up to the git root (inclusive); only cwd without a repository."""
        if self.git_root is None:
            return [self.cwd]
        dirs = [self.cwd]
        while dirs[-1] != self.git_root and dirs[-1].parent != dirs[-1]:
            dirs.append(dirs[-1].parent)
        return dirs

    def downward(self) -> list[Path]:
        """The git root, each directory below it, and cwd last; only cwd without a repository."""
        return list(reversed(self.upward()))

    def label(self, path: Path, base: Path | None = None) -> str:
        """``path`` relative to ``base`` (the project root by default), with forward slashes."""
        try:
            return path.relative_to(base or self.root).as_posix()
        except ValueError:
            return path.name

    def read(
        self, path: Path, transform: Callable[[str], str] | None = None
    ) -> FileText | None:
        return read_candidate(
            path, max_chars=self.max_chars, plugin=self.plugin, boundary=self.root,
            timeout=self.timeout, transform=transform,
        )

    def read_first(
        self, directory: Path, names: Sequence[str],
        transform: Callable[[str], str] | None = None,
    ) -> FileText | None:
        """The first of ``names`` in ``directory`` that is readable and not empty."""
        for name in names:
            found = self.read(directory / name, transform)
            if found is not None:
                return found
        return None


def project(ctx: PromptContext, plugin: str) -> Project | None:
    """The project of ``ctx``; ``None`` when cwd is not a directory (nothing to search)."""
    try:
        cwd = Path(ctx.cwd).resolve()
        if not cwd.is_dir():
            log.debug("context_files_no_cwd", cwd=str(ctx.cwd))
            return None
    except (OSError, RuntimeError):
        log.debug("context_files_no_cwd", cwd=str(ctx.cwd))
        return None
    return Project(
        cwd=cwd, git_root=find_git_root(cwd), max_chars=max_chars_for(ctx),
        timeout=read_timeout(ctx), plugin=plugin,
    )

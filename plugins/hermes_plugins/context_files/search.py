"""What every built-in loader needs: the project's directories and a first-match file read."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from hermes_core.plugin import PromptContext, get_logger
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
        base = os.fspath(directory)
        for name in names:
            # Most candidates are absent: tell so from a string path, before building a Path
            # and a read (a third of the block's time went to probing absent names).
            try:
                os.lstat(os.path.join(base, name))
            except (FileNotFoundError, NotADirectoryError):
                continue
            except OSError:
                pass  # the read reports it
            found = self.read(directory / name, transform)
            if found is not None:
                return found
        return None


class Locations:
    """Where each cwd led, for one prompt build.

    The four built-in loaders (and any third party's that uses ``project``) all ask where the
    project is; the answer costs a syscall per path component and per ancestor, and cannot
    change in a way one build should see halfway through. The ``context_files`` block makes
    one ``Locations`` per build and passes it to the built-in loaders, so cwd is resolved and
    its git root found once; the next build makes a new one, so a repository created or a
    directory moved between sessions is seen by it.
    """

    __slots__ = ("_where",)

    def __init__(self) -> None:
        self._where: dict[Path, tuple[Path, Path | None] | None] = {}

    def locate(self, cwd: Path) -> tuple[Path, Path | None] | None:
        """``_locate(cwd)``, looked up once per cwd in this build."""
        if cwd in self._where:
            return self._where[cwd]
        where = self._where[cwd] = _locate(cwd)
        return where


def _locate(cwd: Path | str) -> tuple[Path, Path | None] | None:
    try:
        resolved = Path(cwd).resolve()
        if not resolved.is_dir():
            log.debug("context_files_no_cwd", cwd=str(cwd))
            return None
    except (OSError, RuntimeError):
        log.debug("context_files_no_cwd", cwd=str(cwd))
        return None
    return resolved, find_git_root(resolved)


def project(
    ctx: PromptContext, plugin: str, locations: Locations | None = None
) -> Project | None:
    """The project of ``ctx``; ``None`` when cwd is not a directory (nothing to search).

    ``locations``: the build's ``Locations``, shared by the loaders of one build; without it
    the project is located afresh."""
    where = _locate(ctx.cwd) if locations is None else locations.locate(ctx.cwd)
    if where is None:
        return None
    cwd, git_root = where
    return Project(
        cwd=cwd, git_root=git_root, max_chars=max_chars_for(ctx),
        timeout=read_timeout(ctx), plugin=plugin,
    )

"""Find and read the skills of one directory: ``<root>/<category…>/<skill>/SKILL.md``.

The walk lists only directories that hold no ``SKILL.md`` (the root and the categories): for
each subdirectory it first tries to open ``<sub>/SKILL.md``; success makes ``<sub>`` a skill
and nothing below it is searched (its ``references/``, ``scripts/`` ... belong to the skill),
failure makes it a category to list. That is the same number of system calls as the cheapest
possible scan, and it makes the manifest exact: a skill can only appear or vanish by changing
a directory the walk listed (its mtime is in the manifest) or a ``SKILL.md`` it read (its
mtime and size are in the manifest).

Everything that goes wrong becomes a *problem* (kind, message, path) instead of an exception;
the index reports them as warnings, and the snapshot keeps them so a later build reports them
again.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from operator import itemgetter
from typing import Any

import attrs

from hermes_core.plugin import DEFAULT_MAX_BYTES, FileRefused, open_regular, read_fd_bounded
from hermes_plugins.skills.frontmatter import parse_frontmatter, parse_source
from hermes_plugins.skills.metadata import (
    ROW_CATEGORY,
    ROW_CONDITIONS,
    ROW_NAME,
    ROW_PATH,
    clean_description,
    make_row,
)

SKILL_FILE = "SKILL.md"
CATEGORY_FILE = "DESCRIPTION.md"
ROOT_CATEGORY = "general"
ORG_DIR = "_org"
ORG_MARKER = ".active_org"

#: Directories never searched for skills (§10.1 ``EXCLUDED_SKILL_DIRS``). A skill's own support
#: folders (references, templates, assets, scripts) are never searched either, because the walk
#: stops at a skill directory; a *category* named ``scripts`` still works.
EXCLUDED_DIRS = frozenset({
    ".git", ".github", ".hub", ".archive", ".venv", "venv", "node_modules", "site-packages",
    "__pycache__", ".tox", ".nox", ".pytest_cache", ".mypy_cache", ".ruff_cache",
})

Progress = Callable[[int, int], None]
#: Group flags: some row of the group has conditions / two rows share a name.
GROUP_CONDITIONAL = 1
GROUP_DUPLICATES = 2
#: The most bytes read from one SKILL.md or DESCRIPTION.md (only the frontmatter is indexed).
MAX_FILE_BYTES = DEFAULT_MAX_BYTES
_NOT_A_SKILL = (errno.ENOENT, errno.ENOTDIR)
_END_FENCE = re.compile(rb"\n---[ \t\r]*(?:\n|\Z)")
_PRINTABLE = bytes(range(0x20, 0x7F)) + b"\n"


@attrs.define(kw_only=True, eq=False)
class SourceScan:
    """What one skills directory holds, plus the manifest that proves it is still current.

    ``paths`` / ``mtimes`` / ``sizes`` are the manifest, parallel lists relative to ``root``
    (``""`` is the root; a size of ``-1`` records a path that must stay absent). ``rows`` are
    ``metadata`` rows sorted by category, name and path; ``groups`` are
    ``[category, start, end, flags]`` slices of ``rows``, one per category, so a build can take
    a whole category without looking at each skill. ``problems`` are ``[kind, message, path]``.
    """

    root: str
    exists: bool = True
    complete: bool = True
    scanned_ns: int = 0
    rows: list[list[Any]] = attrs.field(factory=list)
    groups: list[list[Any]] = attrs.field(factory=list)
    categories: dict[str, str] = attrs.field(factory=dict)
    problems: list[list[str]] = attrs.field(factory=list)
    paths: list[str] = attrs.field(factory=list)
    mtimes: list[int] = attrs.field(factory=list)
    sizes: list[int] = attrs.field(factory=list)
    #: The most bytes read from one SKILL.md / DESCRIPTION.md (``files.max_read_bytes``).
    max_bytes: int = MAX_FILE_BYTES

    def problem(self, kind: str, message: str, path: str) -> None:
        self.problems.append([kind, message, path])

    def record(self, rel: str, st: os.stat_result) -> None:
        self.paths.append(rel)
        self.mtimes.append(st.st_mtime_ns)
        self.sizes.append(st.st_size)


def scan_source(
    root: str, *, progress: Progress | None = None, max_bytes: int = MAX_FILE_BYTES
) -> SourceScan:
    """Walk ``root`` and read every skill in it. Never raises for what is on disk."""
    scan = SourceScan(root=root, scanned_ns=time.time_ns(), max_bytes=max_bytes)
    try:
        st = os.stat(root)
    except OSError as exc:
        scan.exists = False
        if exc.errno not in _NOT_A_SKILL:
            scan.complete = False
            scan.problem("skills_dir_unreadable", f"cannot read skills directory {root}: {exc.strerror}", root)
        return scan
    if not stat.S_ISDIR(st.st_mode):
        scan.exists = False
        scan.problem("skills_dir_unreadable", f"skills source {root} is not a directory", root)
        return scan
    _walk(scan, root, "", "", st, {(st.st_dev, st.st_ino)}, progress)
    _finish(scan)
    return scan


def _walk(
    scan: SourceScan,
    abs_dir: str,
    rel_dir: str,
    category: str,
    st: os.stat_result,
    ancestors: set[tuple[int, int]],
    progress: Progress | None,
) -> None:
    scan.record(rel_dir, st)
    listed = _list_dir(scan, abs_dir)
    if listed is None:
        return
    subdirs, has_description = listed
    if has_description:
        _read_category(scan, abs_dir, rel_dir, category or ROOT_CATEGORY)
    subdirs.sort()
    at_root = not rel_dir
    if at_root and ORG_DIR in subdirs:
        subdirs.remove(ORG_DIR)
        _walk_org(scan, abs_dir, ancestors)
    total = len(subdirs)
    sep = os.sep
    skill_suffix = sep + SKILL_FILE
    rel_suffix = "/" + SKILL_FILE
    own_category = category or ROOT_CATEGORY
    paths, mtimes, sizes, rows = scan.paths, scan.mtimes, scan.sizes, scan.rows
    limit = scan.max_bytes
    # The loop body is the hot path of a cold scan (once per skill): kept inline.
    for done, name in enumerate(subdirs, 1):
        child = abs_dir + sep + name
        skill_path = child + skill_suffix
        try:
            # Never blocks, and refuses what is not a regular file (a FIFO, /dev/zero ...).
            fd, st = open_regular(skill_path)
        except FileRefused as exc:
            if exc.errno == errno.ELOOP:
                _not_opened(scan, exc, child, rel_dir + name, name, category, ancestors)
            else:  # a directory, FIFO, device or socket named SKILL.md: not a skill
                _unreadable(scan, skill_path, exc)
        except OSError as exc:
            _not_opened(scan, exc, child, rel_dir + name, name, category, ancestors)
        else:
            try:
                size = st.st_size
                data, cut = read_fd_bounded(fd, size, limit)
                if cut:
                    _too_large(scan, skill_path)
            except OSError as exc:
                _unreadable(scan, skill_path, exc)
            else:
                rel = rel_dir + name + rel_suffix
                paths.append(rel)
                mtimes.append(st.st_mtime_ns)
                sizes.append(size)
                rows.append(_skill_row(scan, data, skill_path, own_category, name, rel))
            finally:
                os.close(fd)
        if progress is not None and at_root:
            progress(done, total)


def _list_dir(scan: SourceScan, abs_dir: str) -> tuple[list[str], bool] | None:
    """``(the folders in abs_dir, whether it holds a category description)``; ``None`` (the
    problem noted, the scan marked incomplete) when it cannot be listed."""
    subdirs: list[str] = []
    has_description = False
    try:
        with os.scandir(abs_dir) as entries:
            for entry in entries:
                name = entry.name
                if name in EXCLUDED_DIRS:
                    continue
                if name == CATEGORY_FILE:
                    has_description = True
                    continue
                try:
                    if not entry.is_dir():
                        continue
                except OSError as exc:  # is_dir() raises for a looping symlink
                    if exc.errno == errno.ELOOP:
                        scan.problem(
                            "skills_symlink_loop", f"{entry.path} is a symlink loop; skipped", entry.path
                        )
                    continue
                subdirs.append(name)
    except OSError as exc:
        scan.complete = False
        scan.problem(
            "skills_dir_unreadable",
            f"cannot list {abs_dir}: {exc.strerror or exc}; the skills below it are not indexed",
            abs_dir,
        )
        return None
    return subdirs, has_description


def _not_opened(
    scan: SourceScan,
    exc: OSError,
    child: str,
    child_rel: str,
    name: str,
    category: str,
    ancestors: set[tuple[int, int]],
) -> None:
    """``<child>/SKILL.md`` could not be opened: a category to descend into, or a problem."""
    if exc.errno in _NOT_A_SKILL:
        _descend(scan, child, child_rel, (category + "/" + name) if category else name, ancestors)
    elif exc.errno == errno.ELOOP:
        if os.path.isdir(child):  # the directory is fine: its SKILL.md is the loop
            skill_path = child + os.sep + SKILL_FILE
            scan.problem(
                "skills_symlink_loop",
                f"{skill_path} is a symlink loop (it never reaches a file); skipped",
                skill_path,
            )
        else:
            scan.problem("skills_symlink_loop", f"{child} is part of a symlink loop; skipped", child)
    else:
        _unopenable(scan, child, child_rel, child + os.sep + SKILL_FILE, category, name, exc)


def _skill_row(scan: SourceScan, data: bytes, path: str, category: str, dir_name: str, rel: str) -> list[Any]:
    if data.isascii():
        # ASCII is valid UTF-8: cut the frontmatter out of the bytes and decode only that.
        source = None
        eol = data.find(b"\n") if data.startswith(b"---") else -1
        if eol >= 3 and not data[3:eol].strip():
            fence = _END_FENCE.search(data, eol)
            if fence is not None:
                source = data[eol + 1 : fence.start() + 1]
        frontmatter: dict[str, Any] = {}
        error: str | None = None
        if source is not None:
            # Only printable ASCII and newlines left after deleting them: YAML-safe text.
            printable = not source.translate(None, _PRINTABLE)
            frontmatter, error = parse_source(source.decode("ascii"), printable=printable)
    else:
        text = _decode(scan, data, path)
        if text is None:
            return make_row({}, category=category, dir_name=dir_name, path=rel)
        frontmatter, error = parse_frontmatter(text)
    if error is not None:
        scan.problem("skill_frontmatter_invalid", f"{path}: {error}", path)
    if error is None and not (frontmatter.get("name") and frontmatter.get("description")):
        missing = [key for key in ("name", "description") if not frontmatter.get(key)]
        scan.problem(
            "skill_frontmatter_incomplete",
            f"{path}: no {' or '.join(missing)} in the frontmatter"
            + (f"; listed as {dir_name!r}" if "name" in missing else ""),
            path,
        )
    if category == ROOT_CATEGORY:
        declared = frontmatter.get("category")
        if isinstance(declared, str) and declared.strip():
            category = declared.strip().strip("/")
    return make_row(frontmatter, category=category, dir_name=dir_name, path=rel)


def _decode(scan: SourceScan, data: bytes, path: str) -> str | None:
    """The text of a non-ASCII SKILL.md; ``None`` when its frontmatter is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        fence = data.find(b"\n---", 3)
        in_frontmatter = fence < 0 or exc.start < fence
        scan.problem(
            "skill_file_not_utf8",
            f"{path} is not valid UTF-8 (byte {exc.start})"
            + ("; its frontmatter was ignored" if in_frontmatter else "; its body will not load cleanly"),
            path,
        )
        return None if in_frontmatter else data.decode("utf-8", errors="replace")


def _unopenable(
    scan: SourceScan, child: str, child_rel: str, skill_path: str, category: str, name: str, exc: OSError
) -> None:
    # EACCES on <dir>/SKILL.md: either the directory cannot be searched or the file cannot be
    # read. stat() tells them apart; an unreadable SKILL.md is still a skill (listed by name).
    try:
        st = os.stat(skill_path)
    except OSError:
        scan.complete = False
        scan.problem(
            "skills_dir_unreadable",
            f"cannot read {child}: {exc.strerror or exc}; the skills below it are not indexed",
            child,
        )
        return
    rel = child_rel + "/" + SKILL_FILE
    scan.record(rel, st)
    _unreadable(scan, skill_path, exc)
    scan.rows.append(make_row({}, category=category or ROOT_CATEGORY, dir_name=name, path=rel))


def _too_large(scan: SourceScan, path: str) -> None:
    scan.problem(
        "skill_file_too_large",
        f"{path} is larger than {scan.max_bytes:,} bytes; only the first {scan.max_bytes:,} were read",
        path,
    )


def _unreadable(scan: SourceScan, path: str, exc: OSError) -> None:
    scan.problem("skill_file_unreadable", f"cannot read {path}: {exc.strerror or exc}", path)
    if exc.errno != errno.EISDIR:
        # Fixing a permission (chmod) or a flaky disk moves no mtime: never trust this scan.
        scan.complete = False


def _descend(
    scan: SourceScan,
    child: str,
    child_rel: str,
    child_category: str,
    ancestors: set[tuple[int, int]],
) -> None:
    try:
        st = os.stat(child)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            scan.problem("skills_symlink_loop", f"{child} is part of a symlink loop; skipped", child)
        return
    identity = (st.st_dev, st.st_ino)
    if identity in ancestors:
        scan.problem(
            "skills_symlink_loop", f"{child} links back to a directory above it; not followed", child
        )
        return
    ancestors.add(identity)
    try:
        _walk(scan, child, child_rel + "/", child_category, st, ancestors, None)
    finally:
        ancestors.discard(identity)


def _walk_org(scan: SourceScan, root: str, ancestors: set[tuple[int, int]]) -> None:
    # Only the organisation named in _org/.active_org is indexed; without the marker, none.
    marker_rel = ORG_DIR + "/" + ORG_MARKER
    marker = root + os.sep + ORG_DIR + os.sep + ORG_MARKER
    try:
        fd, st = open_regular(marker)
    except FileRefused as exc:
        scan.problem("skills_org_invalid", f"{marker} is {exc.what_it_is}; no organisation is indexed", marker)
        scan.complete = False
        return
    except OSError:
        scan.paths.append(marker_rel)
        scan.mtimes.append(-1)
        scan.sizes.append(-1)
        return
    try:
        org = os.read(fd, 4096).decode("utf-8", errors="replace").strip()
    except OSError as exc:
        _unreadable(scan, marker, exc)
        return
    finally:
        os.close(fd)
    scan.record(marker_rel, st)
    if not org or "/" in org or os.sep in org or org in (".", "..") or not org.isprintable():
        if org:
            scan.problem("skills_org_invalid", f"{marker} names no usable organisation: {org[:80]!r}", marker)
        return
    child = root + os.sep + ORG_DIR + os.sep + org
    _descend(scan, child, ORG_DIR + "/" + org, "org:" + org, ancestors)


def _read_category(scan: SourceScan, abs_dir: str, rel_dir: str, category: str) -> None:
    path = abs_dir + os.sep + CATEGORY_FILE
    try:
        fd, st = open_regular(path)
        try:
            data, cut = read_fd_bounded(fd, st.st_size, scan.max_bytes)
        finally:
            os.close(fd)
    except OSError as exc:
        _unreadable(scan, path, exc)
        return
    if cut:
        _too_large(scan, path)
    scan.record(rel_dir + CATEGORY_FILE, st)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        scan.problem("skill_file_not_utf8", f"{path} is not valid UTF-8 (byte {exc.start}); ignored", path)
        return
    frontmatter, error = parse_frontmatter(text)
    if error is not None:
        scan.problem("skill_frontmatter_invalid", f"{path}: {error}", path)
    description = clean_description(frontmatter.get("description"))
    if description:
        scan.categories[category] = description


def _finish(scan: SourceScan) -> None:
    """Sort the rows, cut them into category groups, and report names used twice."""
    rows = scan.rows
    rows.sort(key=_ORDER)
    names = list(map(_NAME, rows))
    duplicates = len(set(names)) != len(names)
    if duplicates:
        _report_duplicates(scan)
    categories = list(map(_CATEGORY, rows))
    conditions = list(map(_CONDITIONS, rows))
    for category in sorted(set(categories)):
        start = bisect_left(categories, category)
        end = bisect_right(categories, category)
        flags = 0
        if conditions[start:end].count(None) != end - start:
            flags |= GROUP_CONDITIONAL
        if duplicates and len(set(names[start:end])) != end - start:
            flags |= GROUP_DUPLICATES
        scan.groups.append([category, start, end, flags])


def _report_duplicates(scan: SourceScan) -> None:
    # Two skills of one tree with the same name: skill_view(name) is ambiguous, and within one
    # category only the first is listed.
    seen: dict[str, list[Any]] = {}
    for row in scan.rows:
        name = row[ROW_NAME]
        first = seen.setdefault(name, row)
        if first is row:
            continue
        same_category = first[ROW_CATEGORY] == row[ROW_CATEGORY]
        scan.problem(
            "skill_name_duplicate",
            f"skill name {name!r} is used by both {first[ROW_PATH]} and {row[ROW_PATH]} "
            f"in {scan.root}; "
            + ("only the first is listed" if same_category else "both are listed")
            + f" and skill_view({name!r}) is ambiguous",
            scan.root + os.sep + row[ROW_PATH],
        )


_ORDER = itemgetter(ROW_CATEGORY, ROW_NAME, ROW_PATH)
_NAME = itemgetter(ROW_NAME)
_CATEGORY = itemgetter(ROW_CATEGORY)
_CONDITIONS = itemgetter(ROW_CONDITIONS)

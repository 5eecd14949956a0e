"""The disk snapshot ``$HERMES_HOME/.skills_prompt_snapshot.json``: parsed skills plus proof.

For every snapshotted source it stores the rows, category descriptions and problems of the last
scan, and a manifest of ``(mtime_ns, size)`` for every directory the scan listed and every
``SKILL.md`` / ``DESCRIPTION.md`` it read. A new process re-uses an entry only when a ``stat``
of every manifest path matches exactly; anything else (a changed file, a new skill, a corrupt
or foreign snapshot) means a rescan. ``stat`` equality is not trusted for files changed within
``RACY_WINDOW_NS`` of the scan (timestamps are coarse: a write in the same clock tick as the
scan keeps its mtime), the same caution git applies to its index.

Writes go to a temporary file in the same directory and are renamed over the snapshot, so
readers - and concurrent writers - only ever see a complete file.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_core.plugin import FileRefused, get_logger, open_regular, read_fd_bounded
from hermes_plugins.skills.discovery import SourceScan

try:
    import orjson

    def _loads(data: bytes) -> Any:
        return orjson.loads(data)

    def _dumps(doc: Any) -> bytes:
        return orjson.dumps(doc)

    JSON_LIBRARY = "orjson"
except ImportError:  # pragma: no cover - exercised by forcing the fallback in tests
    import json

    def _loads(data: bytes) -> Any:
        return json.loads(data)

    def _dumps(doc: Any) -> bytes:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")

    JSON_LIBRARY = "json"

log = get_logger("hermes_plugins.skills")

SNAPSHOT_NAME = ".skills_prompt_snapshot.json"
FORMAT = "hermes-skills-index"
VERSION = 1
#: Changes this close to a scan may not move a file's mtime (coarse timestamps: ext4 ticks,
#: HFS+ and FAT seconds), so such a snapshot is rebuilt rather than trusted.
RACY_WINDOW_NS = 2_000_000_000
#: A snapshot of 10,000 skills is a few MB; anything far larger is not ours.
MAX_SNAPSHOT_BYTES = 128 * 1024 * 1024

Problem = list[str]


def snapshot_path(home: str | os.PathLike[str]) -> str:
    return os.path.join(os.fspath(home), SNAPSHOT_NAME)


def load_snapshot(path: str) -> tuple[dict[str, Any], Problem | None]:
    """The snapshot's ``sources`` mapping (root -> entry), and a problem when it was unusable.

    A missing snapshot is ``({}, None)``: normal on a first run.
    """
    try:
        fd, info = open_regular(path)
    except (FileNotFoundError, NotADirectoryError):
        return {}, None
    except FileRefused as exc:
        return {}, _ignored(path, f"is {exc.what_it_is}, not a regular file")
    except OSError as exc:
        return {}, _ignored(path, f"cannot be read ({exc.strerror or exc})")
    try:
        if info.st_size > MAX_SNAPSHOT_BYTES:  # not ours: never read a byte of it
            return {}, _ignored(path, f"is larger than {MAX_SNAPSHOT_BYTES:,} bytes")
        data, cut = read_fd_bounded(fd, info.st_size, MAX_SNAPSHOT_BYTES)
    except OSError as exc:
        return {}, _ignored(path, f"cannot be read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    if cut:
        return {}, _ignored(path, f"is larger than {MAX_SNAPSHOT_BYTES:,} bytes")
    try:
        doc = _loads(data)
    except (ValueError, RecursionError):
        return {}, _ignored(path, "is not valid JSON (corrupt, truncated or nested too deeply)")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return {}, _ignored(path, "is not a hermes skills snapshot")
    if doc.get("version") != VERSION:
        return {}, _ignored(path, f"has format version {doc.get('version')!r}, expected {VERSION}")
    sources = doc.get("sources")
    if not isinstance(sources, dict):
        return {}, _ignored(path, "has no sources table")
    return sources, None


def _ignored(path: str, why: str) -> Problem:
    return ["skills_snapshot_ignored", f"skills snapshot {path} {why}; rebuilding it", path]


def is_current(entry: Any, root: str) -> bool:
    """Whether ``entry`` still describes ``root``: a stat of every manifest path matches."""
    try:
        paths, mtimes, sizes = entry["paths"], entry["mtimes"], entry["sizes"]
        if not entry["complete"] or entry["newest_ns"] >= entry["scanned_ns"] - RACY_WINDOW_NS:
            return False
        if not (len(paths) == len(mtimes) == len(sizes)) or not isinstance(entry["groups"], list):
            return False
    except (KeyError, TypeError):
        return False
    prefix = root + os.sep
    stat = os.stat
    try:
        for rel, mtime, size in zip(paths, mtimes, sizes, strict=True):
            try:
                st = stat(prefix + rel)
            except FileNotFoundError:
                if size == -1:
                    continue
                return False
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
    except (OSError, TypeError, ValueError):
        return False
    return True


def scan_from_entry(root: str, entry: Mapping[str, Any]) -> SourceScan:
    return SourceScan(
        root=root,
        scanned_ns=entry["scanned_ns"],
        rows=entry["rows"],
        groups=entry["groups"],
        categories=entry.get("categories") or {},
        problems=entry.get("problems") or [],
        paths=entry["paths"],
        mtimes=entry["mtimes"],
        sizes=entry["sizes"],
    )


def entry_from_scan(scan: SourceScan) -> dict[str, Any]:
    return {
        "complete": scan.complete,
        "scanned_ns": scan.scanned_ns,
        "newest_ns": max(scan.mtimes, default=0),
        "paths": scan.paths,
        "mtimes": scan.mtimes,
        "sizes": scan.sizes,
        "rows": scan.rows,
        "groups": scan.groups,
        "categories": scan.categories,
        "problems": scan.problems,
    }


def write_snapshot(path: str, sources: Mapping[str, Any]) -> bool:
    """Atomically replace the snapshot with ``sources`` (root -> entry). False on failure.

    A failure is logged, not raised: the snapshot is only a cache.
    """
    data = _dumps({"format": FORMAT, "version": VERSION, "sources": dict(sources)})
    directory = os.path.dirname(path) or "."
    tmp = os.path.join(
        directory,
        f".{os.path.basename(path)}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp",
    )
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        log.info("skills_snapshot_write_failed", path=path, error=str(exc))
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True


def delete_snapshot(home: str | os.PathLike[str]) -> None:
    Path(snapshot_path(home)).unlink(missing_ok=True)

"""Reading one candidate context file: bounded, with a timeout, and never silently skipped.

Every reason a candidate is passed over (a directory where a file was expected, a symlink loop,
a link out of the repository, NUL bytes, no permission, a read that hangs) becomes a warning
that names the file, and the loader carries on as if the file were absent. Invalid UTF-8 is
decoded with replacement characters and a warning.

A file too large to fit in the prompt is never read whole: when its size in bytes is more than
four times the cap (so it has more characters than the cap), only the bytes that can hold the
kept head are read, and the tail is read after a seek to the end.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from hermes_core.plugin import FileRefused, get_logger, open_regular, record_warning
from hermes_plugins._common.truncation import part_sizes
from hermes_plugins.context_files import workers

log = get_logger(__name__)

BYTES_PER_CHAR_MAX = 4
# Files up to this size are read whole whatever the cap: cheap, and it keeps the head and tail
# reads of the seek path far apart for tiny caps.
WHOLE_READ_MIN_BYTES = 64 * 1024
_BOM = "\ufeff"


@attrs.frozen(kw_only=True)
class FileText:
    """A context file as read: the whole text, or its beginning and end when it is huge.

    ``complete`` is False when the middle was never read; ``head`` and ``tail`` are then a
    prefix and a suffix of the file and ``chars`` is an estimate from the byte size.
    """

    path: Path
    head: str
    tail: str = ""
    chars: int
    complete: bool = True
    identity: tuple[int, int] = (0, 0)

    @property
    def key(self) -> tuple[str, str, int]:
        """What two files with the same content share."""
        return (self.head, self.tail, self.chars)


class _NotRegular(OSError):
    pass


@attrs.frozen(kw_only=True)
class _Raw:
    head: bytes
    tail: bytes | None  # None: ``head`` is the whole file
    size: int
    tail_start: int
    identity: tuple[int, int]


def _skip(kind: str, message: str, path: Path, plugin: str, **details: Any) -> None:
    record_warning(kind, message, plugin=plugin, path=str(path), **details)


def read_candidate(
    path: Path,
    *,
    max_chars: int,
    plugin: str,
    boundary: Path | None = None,
    timeout: float | None = None,
    transform: Callable[[str], str] | None = None,
) -> FileText | None:
    """Read ``path`` for the prompt, or return ``None`` (absent, empty, or skipped with a warning).

    ``boundary`` is the repository root: a file whose real path (after symlinks) lies outside
    it is not read. ``transform`` runs on the text (the head of a huge file) before it is
    stripped, e.g. to drop YAML frontmatter.
    """
    try:
        link = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        _skip("context_file_unreadable", f"cannot look at {path}: {exc.strerror}; it was skipped",
              path, plugin, error=exc.strerror)
        return None
    if not _reachable(path, is_link=stat.S_ISLNK(link.st_mode), boundary=boundary, plugin=plugin):
        return None
    try:
        raw = _call_with_timeout(lambda: _read_bounded(path, max_chars), timeout)
    except workers.TimedOut:
        _skip("context_file_read_timeout",
              f"reading {path} took longer than {timeout:g}s (context.file_read_timeout); "
              "it was skipped", path, plugin, timeout=timeout)
        return None
    except IsADirectoryError:
        _skip("context_file_not_a_file", f"{path} is a directory, not a file; it was skipped",
              path, plugin)
        return None
    except _NotRegular as exc:
        _skip("context_file_not_a_file",
              f"{path} is {exc.strerror or 'not a regular file'}, not a regular file; it was skipped",
              path, plugin)
        return None
    except OSError as exc:
        _skip("context_file_unreadable",
              f"cannot read {path}: {exc.strerror or exc}; it was skipped",
              path, plugin, error=exc.strerror or str(exc))
        return None
    if b"\x00" in raw.head or (raw.tail is not None and b"\x00" in raw.tail):
        _skip("context_file_binary",
              f"{path} contains NUL bytes, so it looks like a binary file; it was skipped",
              path, plugin)
        return None
    return _decode(path, raw, plugin, transform)


def _reachable(path: Path, *, is_link: bool, boundary: Path | None, plugin: str) -> bool:
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            _skip("context_file_symlink_loop",
                  f"{path} is a symlink loop (it never reaches a file); it was skipped", path, plugin)
        elif exc.errno in (errno.ENOENT, errno.ENOTDIR):
            _skip("context_file_broken_symlink",
                  f"{path} is a symlink to {os.readlink(path) if is_link else '?'}, which does not "
                  "exist; it was skipped", path, plugin)
        else:
            _skip("context_file_unreadable", f"cannot read {path}: {exc.strerror}; it was skipped",
                  path, plugin, error=exc.strerror)
        return False
    if boundary is None:
        return True
    real = Path(os.path.realpath(path))
    root = Path(os.path.realpath(boundary))
    if not real.is_relative_to(root):
        _skip("context_file_outside_repository",
              f"{path} leads through a symlink to {real}, outside the repository {root}; "
              "the link was not followed", path, plugin, target=str(real), root=str(root))
        return False
    return True


def _call_with_timeout(read: Callable[[], _Raw], timeout: float | None) -> _Raw:
    """Run ``read`` on its own thread and wait at most ``timeout`` seconds for it.

    Only the I/O runs there: warnings are recorded by the caller, whose ContextVar collector
    belongs to the build that asked.
    """
    if not timeout or timeout <= 0:
        return read()
    return workers.run_with_timeout(read, timeout)


def _read_bounded(path: Path, max_chars: int) -> _Raw:
    # The core's open: never blocks (a FIFO planted under a context-file name) and refuses
    # whatever is not a regular file.
    try:
        fd, info = open_regular(path)
    except FileRefused as exc:
        if exc.errno == errno.EISDIR:
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path)) from None
        raise _NotRegular(exc.errno or errno.EINVAL, exc.what_it_is, str(path)) from None
    with open(fd, "rb", closefd=True) as handle:
        identity = (info.st_dev, info.st_ino)
        head_chars, tail_chars = part_sizes(max_chars)
        head_bytes = BYTES_PER_CHAR_MAX * head_chars + BYTES_PER_CHAR_MAX - 1
        tail_bytes = BYTES_PER_CHAR_MAX * tail_chars + BYTES_PER_CHAR_MAX - 1
        whole_limit = max(BYTES_PER_CHAR_MAX * max_chars, WHOLE_READ_MIN_BYTES)
        if info.st_size <= whole_limit:
            data = handle.read(whole_limit + 1)
            if len(data) <= whole_limit:
                return _Raw(head=data, tail=None, size=len(data), tail_start=len(data),
                            identity=identity)
            head = data[:head_bytes]  # the file grew while we looked at it
        else:
            head = handle.read(head_bytes)
        end = handle.seek(0, os.SEEK_END)
        tail_start = max(end - tail_bytes, len(head))
        handle.seek(tail_start)
        tail = handle.read(end - tail_start)
        return _Raw(head=head, tail=tail, size=end, tail_start=tail_start, identity=identity)


def _decode_part(data: bytes, *, final: bool) -> tuple[str, int | None]:
    """Decode strictly; on a bad byte decode with replacement and report its offset."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        return decoder.decode(data, final=final), None
    except UnicodeDecodeError as exc:
        lenient = codecs.getincrementaldecoder("utf-8")("replace")
        return lenient.decode(data, final=final), exc.start


def _decode(
    path: Path, raw: _Raw, plugin: str, transform: Callable[[str], str] | None
) -> FileText | None:
    if raw.tail is None:
        text, bad = _decode_part(raw.head, final=True)
        if bad is not None:
            _warn_invalid(path, plugin, bad)
        text = text.removeprefix(_BOM)
        if transform is not None:
            text = transform(text)
        text = text.strip()
        if not text:
            log.debug("context_file_empty", path=str(path))
            return None
        return FileText(path=path, head=text, chars=len(text), identity=raw.identity)
    # The seek path: the head may end inside a character (the incremental decoder holds those
    # bytes back) and the tail may start inside one (skip its continuation bytes).
    head, bad = _decode_part(raw.head, final=False)
    skip = 0
    while skip < BYTES_PER_CHAR_MAX - 1 and skip < len(raw.tail) and 0x80 <= raw.tail[skip] <= 0xBF:
        skip += 1
    tail, bad_tail = _decode_part(raw.tail[skip:], final=True)
    if bad is not None or bad_tail is not None:
        _warn_invalid(path, plugin, bad if bad is not None else raw.tail_start + skip + (bad_tail or 0))
    decoded_chars = len(head) + len(tail)
    decoded_bytes = len(raw.head) + len(raw.tail) - skip
    middle_bytes = raw.tail_start + skip - len(raw.head)
    head = head.removeprefix(_BOM)
    if transform is not None:
        head = transform(head)
    head = head.lstrip()
    tail = tail.rstrip()
    estimate = len(head) + len(tail) + round(middle_bytes * decoded_chars / max(decoded_bytes, 1))
    return FileText(path=path, head=head, tail=tail, chars=estimate, complete=False,
                    identity=raw.identity)


def _warn_invalid(path: Path, plugin: str, offset: int) -> None:
    record_warning(
        "context_file_invalid_utf8",
        f"{path} is not valid UTF-8 (first bad byte at offset {offset}); the bad bytes were "
        "replaced with U+FFFD",
        plugin=plugin, path=str(path), offset=offset,
    )

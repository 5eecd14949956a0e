"""Bounded reads of the files users and other programs leave under HERMES_HOME or in a project.

``open_regular`` opens without blocking and refuses what is not a regular file (a FIFO hangs,
``/dev/zero`` never ends, a symlink loop never arrives) with a ``FileRefused`` naming it;
``read_bytes_bounded`` reads at most ``max_bytes`` (``files.max_read_bytes``) and says whether
there was more; ``read_text_bounded`` is the plugins' one call, every refusal or cut a warning.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from typing import Any

import attrs

from hermes_core.diagnostics import record_warning
from hermes_core.logging import get_logger

log = get_logger(__name__)

#: The most bytes read from one file unless the caller (or ``files.max_read_bytes``) says less.
DEFAULT_MAX_BYTES = 2_000_000

# O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one (and has
# no effect on regular files). O_NOCTTY: a terminal device never becomes our controlling tty.
OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

_CHUNK = 1 << 16


class FileRefused(OSError):
    """``path`` exists but is not a regular file we will read (``what_it_is`` says what it is)."""

    def __init__(self, path: str | os.PathLike[str], what_it_is: str, err: int = errno.EINVAL) -> None:
        super().__init__(err, f"{what_it_is}, not a regular file", os.fspath(path))
        self.what_it_is = what_it_is


@attrs.frozen(kw_only=True)
class BoundedRead:
    """What ``read_bytes_bounded`` read: ``data`` is the whole file unless ``truncated``."""

    data: bytes
    #: Size reported by fstat when the file was opened (the file may grow while it is read).
    size: int
    truncated: bool
    mtime_ns: int
    identity: tuple[int, int]


def kind_of(mode: int) -> str:
    """A reader's name for a file type: ``"a FIFO"``, ``"a character device"`` ..."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """Open ``path`` for reading without blocking; the fd and its fstat, or an ``OSError``.

    Raises ``FileNotFoundError``/``NotADirectoryError`` for an absent path (errno kept, so a
    caller can tell "absent" from "refused"), ``FileRefused`` for a FIFO, device, socket,
    directory or symlink loop, and any other ``OSError`` (permissions ...) as it came.
    """
    try:
        fd = os.open(path, OPEN_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileRefused(path, "a symlink loop (it never reaches a file)", errno.ELOOP) from None
        if exc.errno == errno.ENXIO:  # a socket, or a device with no driver behind it
            raise FileRefused(path, _kind_by_stat(path, "a socket or an absent device"), errno.ENXIO) from None
        raise
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        err = errno.EISDIR if stat.S_ISDIR(info.st_mode) else errno.EINVAL
        raise FileRefused(path, kind_of(info.st_mode), err)
    return fd, info


def _kind_by_stat(path: str | os.PathLike[str], fallback: str) -> str:
    try:
        return kind_of(os.stat(path).st_mode)
    except OSError:
        return fallback


def dangling_target(path: str | os.PathLike[str]) -> str | None:
    """Where ``path`` points when it is a symlink to nothing (an absent file that is not)."""
    try:
        if not os.path.islink(path) or os.path.exists(path):
            return None
        return os.readlink(path)
    except OSError:
        return None


def read_fd_bounded(fd: int, size: int, max_bytes: int) -> tuple[bytes, bool]:
    """Read at most ``max_bytes`` from ``fd``; the bytes and whether the file had more.

    ``size`` is the fstat size: one read normally does it, and a file that grew while we read
    is read on only up to the bound.
    """
    want = min(size, max_bytes) + 1
    data = os.read(fd, want)
    if len(data) < want and len(data) >= size:
        return data, False
    parts = [data]
    have = len(data)
    while have <= max_bytes:
        more = os.read(fd, min(_CHUNK, max_bytes + 1 - have))
        if not more:
            break
        parts.append(more)
        have += len(more)
    data = b"".join(parts)
    if len(data) > max_bytes:
        return data[:max_bytes], True
    return data, False


def read_bytes_bounded(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> BoundedRead:
    """The first ``max_bytes`` of the regular file ``path`` (errors as ``open_regular``)."""
    if max_bytes < 0:
        raise ValueError("max_bytes must not be negative")
    fd, info = open_regular(path)
    try:
        data, truncated = read_fd_bounded(fd, info.st_size, max_bytes)
    finally:
        os.close(fd)
    return BoundedRead(
        data=data, size=max(info.st_size, len(data)), truncated=truncated,
        mtime_ns=info.st_mtime_ns, identity=(info.st_dev, info.st_ino),
    )


def truncation_marker(path: str | os.PathLike[str], size: int, kept: int) -> str:
    """The line that ends a text cut at ``kept`` bytes of a ``size``-byte file."""
    return (
        f"[... truncated: {os.fspath(path)} is {size:,} bytes or more; only the first "
        f"{kept:,} bytes were read]"
    )


def decode_prefix(data: bytes, *, truncated: bool) -> tuple[str, int | None]:
    """UTF-8 text of ``data`` (BOM dropped); the offset of the first bad byte, if any.

    A cut file may end inside a character: those trailing bytes are left out rather than
    turned into a replacement character.
    """
    decoder = codecs.getincrementaldecoder("utf-8-sig")("strict")
    try:
        return decoder.decode(data, final=not truncated), None
    except UnicodeDecodeError as exc:
        lenient = codecs.getincrementaldecoder("utf-8-sig")("replace")
        return lenient.decode(data, final=not truncated), exc.start


def read_text_bounded(
    path: str | os.PathLike[str],
    max_bytes: int,
    what: str,
    *,
    plugin: str | None = None,
    marker: bool = True,
    marker_sep: str = "\n",
    skipped: str = "it was skipped",
    refuse_binary: bool = True,
) -> str | None:
    """The text of ``path`` for a prompt or a config, read safely; ``None`` when there is none.

    ``what`` names the file's role in warnings ("a memory file", "the identity" ...) and
    ``skipped`` says what happens instead when it cannot be used ("the default identity is used
    instead"). Absent: ``None`` without a warning. A parent that is not a directory, not a
    regular file, unreadable, or binary (NUL bytes, unless ``refuse_binary`` is False): ``None``
    and one warning naming the file.
    More than ``max_bytes``: the first ``max_bytes`` (never a broken character), a warning, and
    - unless ``marker`` is False - a marker line after ``marker_sep`` saying what was cut.
    Invalid UTF-8 is replaced (U+FFFD) with a warning.
    """
    shown = os.fspath(path)

    def skip(kind: str, message: str, **details: Any) -> None:
        record_warning(kind, f"{message}; {skipped}", plugin=plugin, path=shown, what=what, **details)

    try:
        read = read_bytes_bounded(path, max_bytes)
    except NotADirectoryError:
        parent = _file_in_the_way(path)
        if parent is not None:
            skip("file_unreadable", f"{parent} is not a directory, so {shown} ({what}) cannot be there",
                 parent=parent)
        return None
    except FileNotFoundError:
        target = dangling_target(path)
        if target is not None:
            skip("file_unreadable", f"{shown} ({what}) is a symlink to {target}, which does not exist",
                 target=target)
        return None
    except FileRefused as exc:
        skip("file_refused", f"{shown} ({what}) is {exc.what_it_is}", file_type=exc.what_it_is)
        return None
    except OSError as exc:
        skip("file_unreadable", f"cannot read {shown} ({what}): {exc.strerror or exc}",
             error=exc.strerror or str(exc))
        return None
    if refuse_binary and b"\x00" in read.data:
        skip("file_binary", f"{shown} ({what}) contains NUL bytes, so it looks like a binary file")
        return None
    text, bad = decode_prefix(read.data, truncated=read.truncated)
    if bad is not None:
        record_warning(
            "file_invalid_utf8",
            f"{shown} ({what}) is not valid UTF-8 (first bad byte at offset {bad}); the bad "
            "bytes were replaced with U+FFFD",
            plugin=plugin, path=shown, what=what, offset=bad,
        )
    if read.truncated:
        record_warning(
            "file_truncated",
            f"{shown} ({what}) is larger than {max_bytes:,} bytes; only the first {max_bytes:,} "
            "were read",
            plugin=plugin, path=shown, what=what, size=read.size, kept=max_bytes,
        )
        if marker:
            text = text.rstrip("\n") + marker_sep + truncation_marker(shown, read.size, max_bytes)
    return text


def _file_in_the_way(path: str | os.PathLike[str]) -> str | None:
    """The nearest existing parent of ``path`` when it is not a directory (why the path cannot
    exist), else ``None``."""
    parent = os.path.dirname(os.path.abspath(path))
    while parent and not os.path.lexists(parent):
        up = os.path.dirname(parent)
        if up == parent:
            return None
        parent = up
    return parent if parent and not os.path.isdir(parent) else None


def max_read_bytes(config: object | None) -> int:
    """``files.max_read_bytes`` of ``config`` (a ``Config``), or the default without one."""
    section = getattr(config, "files", None)
    value = getattr(section, "max_read_bytes", None)
    return value if isinstance(value, int) and value > 0 else DEFAULT_MAX_BYTES


__all__ = [
    "DEFAULT_MAX_BYTES",
    "BoundedRead",
    "FileRefused",
    "dangling_target",
    "decode_prefix",
    "kind_of",
    "max_read_bytes",
    "open_regular",
    "read_bytes_bounded",
    "read_fd_bounded",
    "read_text_bounded",
    "truncation_marker",
]


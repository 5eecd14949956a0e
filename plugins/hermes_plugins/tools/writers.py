"""Where spilled tool results are written: the local filesystem, or inside a remote sandbox.

A writer is a callable ``writer(content, name) -> path | None``: it stores ``content`` as the
file ``name`` where the session's tools can read it, and answers the path (``None`` on failure).

* ``LocalWriter`` writes under ``$HERMES_HOME/cache/spillover/`` (atomic rename, size checked);
  files older than 24 hours there are pruned once per process.
* ``RemoteWriter`` runs commands through the environment's executor, ``run(command,
  stdin_data, timeout)``. The content goes on standard input, never in the command line: the
  reference put it in the command and failed exactly when results passed Linux's 128 KB limit
  for one argument, which is the only case spilling exists for.

File names come from the tool call id (``safe_result_filename``): anything but letters, digits,
``-`` and ``_`` becomes ``_`` (and Windows' reserved names get a hash suffix), so an id can
never climb out of the directory. Ids repeat - providers reuse them - so a name already taken
by a different result is never overwritten: the next variant (``call_1-2.txt`` ...) is used.
Spill files are created 0600, in a 0700 directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import posixpath
import re
import shlex
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from hermes_core.plugin import get_logger, read_bytes_bounded, resolve_home

log = get_logger(__name__)

SPILL_SUBDIR = ("cache", "spillover")
PRUNE_AFTER_SECONDS = 24 * 3600
REMOTE_WRITE_TIMEOUT = 30.0
REMOTE_PROBE_TIMEOUT = 15.0
MAX_STEM = 120
#: Names tried for one result before falling back to a time-stamped one (``call-2.txt`` ...).
MAX_VARIANTS = 50
#: Names Windows reserves (with any extension): a sandbox or share on Windows cannot hold them.
RESERVED_STEMS = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CLOCK$"}
    | {f"COM{i}" for i in range(10)}
    | {f"LPT{i}" for i in range(10)}
)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


class SpillPrunes:
    """The spill directories already pruned, so each is pruned once per owner: the plugin
    host (``host.state(SpillPrunes)``), or a writer built without one."""

    __slots__ = ("_done", "_lock")

    def __init__(self) -> None:
        self._done: set[str] = set()
        self._lock = threading.Lock()

    def first(self, directory: Path) -> bool:
        """Whether ``directory`` is seen for the first time (and is now marked as pruned)."""
        key = str(directory)
        with self._lock:
            if key in self._done:
                return False
            self._done.add(key)
            return True


def safe_result_filename(tool_call_id: str, content: str = "") -> str:
    """``<sanitised id>.txt``; a 12-hex SHA-256 suffix of the id is added when it had to change.

    An empty id (or one with nothing usable) is named after the content's hash instead.
    """
    raw = tool_call_id or ""
    stem = _UNSAFE.sub("_", raw)
    stem = re.sub(r"_+", "_", stem).strip("_-")[:MAX_STEM].rstrip("_-")
    if stem and stem == raw and stem.upper() not in RESERVED_STEMS:
        return f"{stem}.txt"
    seed = raw if raw else content
    digest = hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{stem or 'tool_result'}_{digest}.txt"


def spill_dir(home: str | os.PathLike[str] | None = None) -> Path:
    return resolve_home(home).joinpath(*SPILL_SUBDIR)


def _prune(directory: Path) -> None:
    key = str(directory)
    cutoff = time.time() - PRUNE_AFTER_SECONDS
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_file(follow_symlinks=False) and entry.stat().st_mtime < cutoff:
                os.unlink(entry.path)
                removed += 1
        except OSError:
            continue
    if removed:
        log.info("spillover_pruned", directory=key, removed=removed)


@attrs.frozen(kw_only=True)
class LocalWriter:
    """Writes spilled results on this machine, under ``<home>/cache/spillover``."""

    directory: Path = attrs.field(converter=Path)
    #: who remembers the directories pruned already (the host's, when a host built the writer)
    prunes: SpillPrunes = attrs.field(factory=SpillPrunes, eq=False, repr=False)

    @classmethod
    def for_home(
        cls, home: str | os.PathLike[str] | None = None, prunes: SpillPrunes | None = None
    ) -> LocalWriter:
        if prunes is None:
            return cls(directory=spill_dir(home))
        return cls(directory=spill_dir(home), prunes=prunes)

    def __call__(self, content: str, name: str) -> str | None:
        if not name or "/" in name or "\\" in name or "\0" in name or name in {".", ".."}:
            log.warning("spill_write_refused", name=name, reason="unsafe file name")
            return None
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            _private_dir(self.directory)
            if self.prunes.first(self.directory):
                _prune(self.directory)
            data = content.encode("utf-8", "surrogatepass")
            # mkstemp creates the file 0600, and the rename keeps that mode.
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".spill-", suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                target, fresh = _claim(self.directory, name, data)
                if fresh:
                    os.replace(tmp, target)
                else:  # the same bytes are already there under this name: reuse that file
                    os.unlink(tmp)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
            if target.stat().st_size != len(data):
                with contextlib.suppress(OSError):
                    target.unlink()
                log.warning("spill_write_failed", path=str(target), reason="size mismatch")
                return None
        except OSError as exc:
            log.warning("spill_write_failed", directory=str(self.directory), error=str(exc))
            return None
        return str(target)


def variant(name: str, n: int) -> str:
    """The ``n``-th name for ``name`` when it is taken: ``call_1.txt`` -> ``call_1-2.txt``."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}-{n}.{ext}" if dot and stem else f"{name}-{n}"


def _claim(directory: Path, name: str, data: bytes) -> tuple[Path, bool]:
    """A path in ``directory`` for ``data``: (path, True) for a name reserved just now (created
    empty, 0600, with O_EXCL, so no two writers get it), (path, False) for an existing file that
    already holds exactly ``data``.

    A tool-call id can repeat (providers reuse them; a session restarts its counter), so the
    plain name may belong to an earlier result: that file is never overwritten.
    """
    flags = os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    for n in range(1, MAX_VARIANTS + 1):
        target = directory / (name if n == 1 else variant(name, n))
        try:
            os.close(os.open(target, flags, 0o600))
        except FileExistsError:
            if _holds(target, data):
                return target, False
            continue
        return target, True
    target = directory / variant(name, int(time.time_ns() % 10**12))
    os.close(os.open(target, flags, 0o600))
    return target, True


def _holds(path: Path, data: bytes) -> bool:
    try:
        read = read_bytes_bounded(path, len(data))
    except OSError:  # a FIFO, a link loop ... planted there: not our file, take another name
        return False
    return not read.truncated and read.data == data


def _private_dir(directory: Path) -> None:
    # mkdir's mode only applies to a directory it creates; tighten one made by someone else.
    with contextlib.suppress(OSError):
        if directory.stat().st_mode & 0o077:
            os.chmod(directory, 0o700)


def _outcome(result: Any) -> tuple[int, str]:
    """(return code, output) from whatever an executor's ``run`` answers."""
    if isinstance(result, tuple) and len(result) >= 2:
        return int(result[0]), str(result[1] or "")
    if isinstance(result, Mapping):
        code = result.get("returncode", result.get("rc", result.get("exit_code", 1)))
        output = result.get("output", result.get("stdout", ""))
        return int(code), str(output or "")
    code = getattr(result, "returncode", getattr(result, "exit_code", 1))
    output = getattr(result, "output", getattr(result, "stdout", ""))
    return int(code), str(output or "")


@attrs.frozen(kw_only=True)
class RemoteWriter:
    """Writes spilled results inside a remote sandbox through its executor.

    ``executor.run(command, stdin_data, timeout)`` runs one shell command there and answers
    ``(returncode, output)`` (a mapping or an object with ``returncode``/``output`` works too).
    """

    executor: Any
    directory: str = "/tmp/hermes-results"
    write_timeout: float = REMOTE_WRITE_TIMEOUT
    probe_timeout: float = REMOTE_PROBE_TIMEOUT

    def _run(self, command: str, stdin_data: str | None, timeout: float) -> tuple[int, str]:
        return _outcome(self.executor.run(command, stdin_data, timeout))

    def _exists(self, quoted_path: str) -> bool:
        try:
            code, _ = self._run(f"test -e {quoted_path}", None, self.probe_timeout)
        except Exception:  # noqa: BLE001 - unknown: treat the failed write as a failure
            return False
        return code == 0

    def __call__(self, content: str, name: str) -> str | None:
        if not name or "/" in name or "\0" in name or name in {".", ".."}:
            return None
        quoted_dir = shlex.quote(self.directory)
        for n in range(1, MAX_VARIANTS + 1):
            path = posixpath.join(self.directory, name if n == 1 else variant(name, n))
            quoted_path = shlex.quote(path)
            # umask 077: the file is the owner's only; set -C (noclobber): an earlier spill under
            # a repeated call id is never overwritten - the write fails and the next name is tried.
            command = f"mkdir -p -m 700 {quoted_dir} && umask 077 && set -C && cat > {quoted_path}"
            try:
                code, output = self._run(command, content, self.write_timeout)
            except Exception as exc:  # noqa: BLE001 - a broken sandbox costs this write only
                log.warning("spill_remote_write_failed", path=path, error=f"{type(exc).__name__}: {exc}")
                return None
            if code == 0:
                break
            if not self._exists(quoted_path):
                log.warning("spill_remote_write_failed", path=path, returncode=code, output=output[-200:])
                return None
        else:
            log.warning("spill_remote_write_failed", path=path, reason="every name is taken")
            return None
        expected = len(content.encode("utf-8", "surrogatepass"))
        try:
            code, output = self._run(f"wc -c < {quoted_path}", None, self.probe_timeout)
        except Exception:  # noqa: BLE001 - the write itself succeeded
            return path
        size = output.strip()
        if code == 0 and size.isdigit() and int(size) != expected:
            log.warning("spill_remote_size_mismatch", path=path, expected=expected, found=int(size))
            try:
                self._run(f"rm -f {quoted_path}", None, self.probe_timeout)
            except Exception as exc:  # noqa: BLE001 - the write is already reported as failed
                log.warning("spill_remote_cleanup_failed", path=path, error=str(exc))
            return None
        return path


def is_local(environment: Any) -> bool:
    if environment is None:
        return True
    if isinstance(environment, str):
        return environment.strip().lower() in {"", "local"}
    return bool(getattr(environment, "is_local", False))


def default_writer(environment: Any, home: str | os.PathLike[str] | None = None) -> Any:
    """The built-in writer for ``environment``: local, remote through its executor, or ``None``."""
    if is_local(environment):
        return LocalWriter.for_home(home)
    if callable(getattr(environment, "run", None)):
        temp = getattr(environment, "temp_dir", None) or "/tmp"
        return RemoteWriter(executor=environment, directory=posixpath.join(str(temp), "hermes-results"))
    return None

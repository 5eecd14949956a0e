"""The configuration ``Session.open`` reads, remembered while its inputs stay the same.

Reused (with the warnings the read raised) while ``config.yaml``'s stat signature, the
environment and ``PluginHost.shared``'s answer are the same. A file changed less than
``SETTLE_SECONDS`` before it was read is not remembered: a rewrite within one timestamp tick
at the same size would keep its signature (git's "racily clean" entries).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.config import Config, load_config
from hermes_core.diagnostics import HostWarning, collecting

if TYPE_CHECKING:
    from hermes_core.host import PluginHost

#: A config file changed more recently than this (seconds) before being read is not remembered.
SETTLE_SECONDS = 2.0
#: Homes remembered at once (a process rarely uses more than one).
ENTRIES = 8

_Signature = tuple[int, int, int, int, int] | None

_MEMO: dict[Path, tuple[_Signature, dict[str, str], PluginHost, Config, tuple[HostWarning, ...]]] = {}
_LOCK = threading.Lock()
_ENVIRON: tuple[dict[Any, Any], dict[str, str]] | None = None


def session_config(home: Path, env: Mapping[str, str]) -> tuple[Config, PluginHost, tuple[HostWarning, ...]]:
    """The bound configuration of ``home``, its shared host, and the warnings reading it raised."""
    from hermes_core.host import PluginHost

    path = home / "config.yaml"
    signature, settled = _signature(path)
    entry = _MEMO.get(home)
    if entry is not None and settled and entry[0] == signature and entry[1] == env:
        _sig, _env, host, config, warnings = entry
        if PluginHost.shared(config=config, env=env) is host:
            return config, host, warnings
    with collecting() as bucket:
        config = load_config(home=home, env=env)
        host = PluginHost.shared(config=config, env=env)
        if config.declared is None:
            config = host.bind_config(config, env=env)
    warnings = tuple(bucket)
    if settled and _signature(path)[0] == signature:  # unchanged while it was read
        with _LOCK:
            _MEMO.pop(home, None)
            while len(_MEMO) >= ENTRIES:
                _MEMO.pop(next(iter(_MEMO)))
            _MEMO[home] = (signature, dict(env), host, config, warnings)
    return config, host, warnings


def _signature(path: Path) -> tuple[_Signature, bool]:
    """The file's stat signature (``None``: missing) and whether it is old enough to trust."""
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        try:
            os.lstat(path)
        except OSError:
            return None, True  # missing: all defaults, the same each time
        return None, False  # a dangling symlink: read it every time, so its error is reported
    except OSError:
        return None, False  # unreadable: read it every time, so its error is reported
    changed = max(info.st_mtime, info.st_ctime)
    signature = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    return signature, time.time() - changed >= SETTLE_SECONDS


def environ_copy() -> dict[str, str]:
    """A copy of ``os.environ`` as ``dict(os.environ)`` gives it, for a fraction of its cost.

    Decoding every variable through ``os.environ``'s mapping methods costs about 1 us per
    variable (36 us for a usual environment, a tenth of a ``Session.open``); the environment
    rarely changes, so the decoded copy is kept and handed out again (as a new dict) while the
    raw mapping CPython keeps behind ``os.environ`` compares equal, a C-level comparison.
    """
    global _ENVIRON
    raw = getattr(os.environ, "_data", None)
    if not isinstance(raw, dict):  # not CPython's os._Environ: no shortcut
        return dict(os.environ)
    kept = _ENVIRON
    if kept is not None and kept[0] == raw:
        return dict(kept[1])
    # Raw first: a change between the two reads then fails the next comparison.
    snapshot = dict(raw)
    text = dict(os.environ)
    _ENVIRON = (snapshot, text)
    return dict(text)


def clear() -> None:
    """Forget every remembered configuration (tests; a host that edits files under the clock)."""
    with _LOCK:
        _MEMO.clear()

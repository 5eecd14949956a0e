"""Opening a session: read the configuration, pick the host and engine, find the window.

``Session.open`` takes the caller's options (``SessionOptions``); this resolves what they leave
open - config.yaml (reused while unchanged, ``config_cache``), the process's shared host, the
working folder, the model's window from the registry snapshot - and starts the engine.
``Session.open`` collects the warnings of all that for the session.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from hermes_core.config import load_config, resolve_home
from hermes_core.config_cache import session_config
from hermes_core.diagnostics import HostWarning
from hermes_core.host import PluginHost
from hermes_core.session_options import SessionOptions

__all__ = ["Clock", "new_session_id", "open_session", "tool_names", "usable_dir"]

Clock = Callable[[], datetime]
_S = TypeVar("_S")


def _wall_clock() -> datetime:
    return datetime.now(UTC)


def new_session_id(clock: Clock | None = None) -> str:
    """``YYYYmmdd_HHMMSS_<6 hex>``: sortable by start time, unique enough per process fleet."""
    now = (clock or _wall_clock)()
    return f"{now:%Y%m%d_%H%M%S}_{secrets.token_hex(3)}"


def tool_names(tools: Iterable[Any]) -> tuple[str, ...]:
    # Names, or OpenAI/Anthropic tool schemas from which the name is taken.
    names: list[str] = []
    for tool in tools or ():
        if isinstance(tool, str):
            name: Any = tool
        elif isinstance(tool, Mapping):
            fn = tool.get("function")
            name = fn.get("name") if isinstance(fn, Mapping) else tool.get("name")
        else:
            name = getattr(tool, "name", None)
        if isinstance(name, str) and name.strip() and name.strip() not in names:
            names.append(name.strip())
    return tuple(names)


def usable_dir(value: str | None) -> Path | None:
    if not value:
        return None
    path = Path(value).expanduser()
    return path if path.is_dir() and os.access(path, os.X_OK) else None


# ``cls`` is ``Session`` (which stands on this module): called with the keywords of its constructor.
def open_session(cls: Callable[..., _S], o: SessionOptions, env: dict[str, str], warnings: list[HostWarning]) -> _S:
    """A ``cls`` (``Session``) for the options and ``env``, the environment it sees (see
    ``Session.open``); the warnings of reading config.yaml are added to ``warnings``."""
    home_path = resolve_home(o.home, env).absolute()
    config, host = o.config, o.host
    if config is None and host is None:
        # The usual call: read (or reuse while unchanged) config.yaml, bound for the
        # process's shared host; the warnings of the read reach every session.
        config, host, read_warnings = session_config(home_path, env)
        warnings.extend(read_warnings)
    if config is None:
        # Read once: the core's keys (the host needs plugins.disabled), then the plugins'.
        config = load_config(home=home_path, env=env)
    if host is None:
        host = PluginHost.shared(config=config, env=env)
    if config.declared is None:
        config = host.bind_config(config, env=env)
    known_id = bool(o.session_id)
    sid = o.session_id or new_session_id(o.clock)
    if o.cwd is not None:
        cwd_path = Path(o.cwd).expanduser().resolve()
    else:
        cwd_path = (usable_dir(config.terminal.cwd) or Path(os.getcwd())).resolve()
    engine = host.create_engine(config.context.engine, config)
    window = o.context_length or 0
    if window <= 0 and o.model:
        # A known model's window from the registry snapshot (read on first need only);
        # the caller's context_length, and a window learned from an overflow, win.
        from hermes_core.model_data import lookup  # loaded on first need (test_model_data)

        known = lookup(o.model, o.provider)
        window = known.context_window if known is not None else 0
    engine.update_model(o.model, window, provider=o.provider, max_tokens=o.max_tokens)
    host.engine_step("on_session_start", engine, session_id=sid, boundary_reason=None)
    store = host.session_store(home_path, config) if (o.persist or known_id) else None
    return cls(
        options=o,
        host=host,
        config=config,
        engine=engine,
        session_id=sid,
        cwd=cwd_path,
        home=home_path,
        env=env,
        store=store,
        restore=known_id and store is not None,
    )

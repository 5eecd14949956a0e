"""Built-in plugin ``tool_output``: the ``tool_output.*`` limits and helpers to apply them (§17).

| key | default | what it caps |
|---|---|---|
| ``tool_output.max_bytes`` | 50,000 | characters of terminal output kept in the context |
| ``tool_output.max_lines`` | 2,000 | lines of one ``read_file`` page |
| ``tool_output.max_line_length`` | 2,000 | characters of one line of a ``read_file`` page |

A bad value falls back to its default with a warning (the config loader does that for this
section); an unreadable config file means all defaults and a warning. Nothing here raises.
A call whose context carries a ``Config`` uses it; otherwise the file is read once per plugin
host for each HERMES_HOME / config path (``ConfigReads``), and on every call of the accessors
below, which have no host (a tool that calls them sees an edited file at once).

This module implements no hook: the limits are applied inside the one result pipeline of the
``tool_results`` plugin (``spill.py``), and tools may call the helpers below directly.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import attrs

from hermes_core.plugin import Config, ConfigError, host_state, load_config, record_warning, resolve_home
from hermes_plugins.tools.settings import TOOL_OUTPUT

DEFAULT_MAX_BYTES = 50_000
DEFAULT_MAX_LINES = 2_000
DEFAULT_MAX_LINE_LENGTH = 2_000


@attrs.frozen(kw_only=True)
class ToolOutputLimits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_lines: int = DEFAULT_MAX_LINES
    max_line_length: int = DEFAULT_MAX_LINE_LENGTH


DEFAULT_LIMITS = ToolOutputLimits()


class ConfigReads:
    """The configurations one plugin host read, by (home, config path) (``host.state``)."""

    __slots__ = ("configs", "lock")

    def __init__(self) -> None:
        self.configs: dict[tuple[str, str | None], Config] = {}
        self.lock = threading.Lock()


def cached_config(
    home: str | os.PathLike[str] | None = None,
    config_path: str | os.PathLike[str] | None = None,
    reads: ConfigReads | None = None,
) -> Config:
    """The configuration of ``home`` (or ``config_path``), read once per ``reads`` (a host's),
    or now when there is none; never raises."""
    key = (str(resolve_home(home)), None if config_path is None else str(config_path))
    config = reads.configs.get(key) if reads is not None else None
    if config is not None:
        return config
    try:
        config = load_config(home=home, path=config_path)
        config.section(TOOL_OUTPUT)  # the section's own errors are this file's too
    except ConfigError as exc:
        record_warning(
            "tool_output_config_unreadable",
            f"tool output limits use their defaults: {exc}",
            plugin="spill",
            path=getattr(exc, "path", None) or (str(config_path) if config_path else None),
        )
        config = Config()
    if reads is not None:
        with reads.lock:
            reads.configs[key] = config
    return config


def limits_from_config(config: Config | None) -> ToolOutputLimits:
    if config is None:
        return DEFAULT_LIMITS
    section = config.section(TOOL_OUTPUT)
    return ToolOutputLimits(
        max_bytes=section.max_bytes,
        max_lines=section.max_lines,
        max_line_length=section.max_line_length,
    )


def get_tool_output_limits(
    home: str | os.PathLike[str] | None = None, config_path: str | os.PathLike[str] | None = None
) -> ToolOutputLimits:
    return limits_from_config(cached_config(home, config_path))


def get_max_bytes(home: str | os.PathLike[str] | None = None) -> int:
    return get_tool_output_limits(home).max_bytes


def get_max_lines(home: str | os.PathLike[str] | None = None) -> int:
    return get_tool_output_limits(home).max_lines


def get_max_line_length(home: str | os.PathLike[str] | None = None) -> int:
    return get_tool_output_limits(home).max_line_length


def limits_for(ctx: Any) -> ToolOutputLimits:
    """The limits for one tool call: its config when it carries one, else its home's file."""
    return limits_from_config(config_for(ctx))


def config_for(ctx: Any) -> Config:
    """A tool call's config: the one its context carries, else its home's file (read once per
    plugin host when the context has one)."""
    config = getattr(ctx, "config", None)
    if config is not None:
        return config  # type: ignore[no-any-return]
    home: Path | None = getattr(ctx, "home", None)
    return cached_config(home, reads=host_state(getattr(ctx, "host", None), ConfigReads))


# --- helpers a tool (or the pipeline) applies ------------------------------------------------


def clamp_read_limit(limit: Any, max_lines: int | None = None) -> int:
    """A ``read_file`` page size: the requested ``limit`` capped at ``max_lines``.

    A missing, non-numeric or non-positive limit means a full page.
    """
    cap = get_max_lines() if max_lines is None else max_lines
    try:
        value = int(limit)
    except (TypeError, ValueError):
        return cap
    return cap if value <= 0 else min(value, cap)


def clip_terminal_output(text: str, max_bytes: int | None = None) -> str:
    """Terminal output within ``max_bytes`` characters: its head and tail around a marker that
    says how much was cut (the end of a command's output is usually what matters most)."""
    cap = get_max_bytes() if max_bytes is None else max_bytes
    if len(text) <= cap:
        return text
    cut = len(text) - cap
    marker = f"\n[... {cut:,} characters of output cut here (output limit {cap:,}) ...]\n"
    room = max(cap - len(marker), 0)
    head = room * 2 // 5
    tail = room - head
    return text[:head] + marker + (text[-tail:] if tail else "")


def clip_long_lines(text: str, max_line_length: int | None = None) -> tuple[str, int]:
    """Every line cut to ``max_line_length`` characters, each cut line saying how much it lost.

    Returns the text and the number of lines cut.
    """
    cap = get_max_line_length() if max_line_length is None else max_line_length
    if len(text) <= cap:
        return text, 0
    lines = text.split("\n")
    cut = 0
    for i, line in enumerate(lines):
        if len(line) > cap:
            lines[i] = f"{line[:cap]} [... {len(line) - cap:,} more characters on this line]"
            cut += 1
    return ("\n".join(lines) if cut else text), cut


def cap_page(text: str, max_lines: int | None = None, offset: Any = None) -> str:
    """At most ``max_lines`` lines of a ``read_file`` page, and where to read on from."""
    cap = get_max_lines() if max_lines is None else max_lines
    lines = text.split("\n")
    if len(lines) <= cap:
        return text
    try:
        start = max(int(offset), 1)
    except (TypeError, ValueError):
        start = 1
    kept = "\n".join(lines[:cap])
    return (
        f"{kept}\n[... page cut at {cap:,} lines ({len(lines) - cap:,} more in this result); "
        f"read on with read_file offset={start + cap} ...]"
    )

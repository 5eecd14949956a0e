"""Logging: structlog events delivered through the standard ``logging`` module.

A library must not decide where its logs go: every logger is a structlog bound logger over a
stdlib logger under ``hermes_core`` (plugins: ``hermes_core.plugins.<module>``) with its own
processors, and ``hermes_core`` has a ``NullHandler`` until the host (or the CLI's
``configure_logging``) configures logging. ``record.hermes_event`` holds the structured event.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, Literal

import structlog

from hermes_core.redaction import redact_text

LogFormat = Literal["console", "json"]

ROOT = "hermes_core"
_root = logging.getLogger(ROOT)
_root.addHandler(logging.NullHandler())


def stdlib_name(name: str | None) -> str:
    """The stdlib logger name for a module: ``hermes_core.*`` as is, others under plugins."""
    if not name:
        return ROOT
    if name == ROOT or name.startswith(ROOT + "."):
        return name
    return f"{ROOT}.plugins.{name}"


def _to_stdlib(logger: Any, method: str, event_dict: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    # The last processor: (args, kwargs) for the stdlib call. The message is readable on its
    # own; the structured dict rides along for handlers that want it.
    exc_info = event_dict.pop("exc_info", None)
    event = dict(event_dict)
    event.setdefault("log_level", "error" if method == "exception" else method)
    keys = " ".join(f"{k}={v!r}" for k, v in event_dict.items() if k != "event")
    message = f"{event_dict.get('event', '')} {keys}".rstrip()
    kwargs: dict[str, Any] = {"extra": {"hermes_event": event}}
    if exc_info:
        kwargs["exc_info"] = exc_info
    return (message,), kwargs


class HermesLogger(structlog.stdlib.BoundLogger):
    """A stdlib-backed bound logger that does nothing when its level is disabled.

    The level check comes first (stdlib caches it per logger), so a debug event in a loop costs
    about as much as a disabled stdlib call, not a trip through the processor chain.
    """

    def _enabled(self, level: int) -> bool:
        return bool(self._logger.isEnabledFor(level))

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.DEBUG):
            return None
        return self._proxy_to_logger("debug", event, *args, **kw)

    def info(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.INFO):
            return None
        return self._proxy_to_logger("info", event, *args, **kw)

    def warning(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.WARNING):
            return None
        return self._proxy_to_logger("warning", event, *args, **kw)

    warn = warning

    def error(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.ERROR):
            return None
        return self._proxy_to_logger("error", event, *args, **kw)

    def exception(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.ERROR):
            return None
        kw.setdefault("exc_info", True)
        return self._proxy_to_logger("error", event, *args, **kw)

    def critical(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if not self._enabled(logging.CRITICAL):
            return None
        return self._proxy_to_logger("critical", event, *args, **kw)


def _redact_event(logger: Any, method: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    # Our own events never carry a secret, whatever text they quote (an error message, a
    # path with a token in it): every string value is redacted before it leaves. A processor
    # of our chain only - the host's logging configuration is left alone.
    for key, value in event_dict.items():
        if type(value) is str and value:
            event_dict[key] = redact_text(value)
    return event_dict


_PROCESSORS: list[Any] = [structlog.contextvars.merge_contextvars, _redact_event, _to_stdlib]


def get_logger(name: str | None = None, **initial: Any) -> HermesLogger:
    """A logger for library or plugin code (``name`` is usually ``__name__``).

    Independent of ``structlog.configure``: the host's logging set-up decides where it goes.
    """
    # Built directly, not through ``structlog.wrap_logger``: its lazy proxy assembles a new
    # bound logger on every call (about 3 us even for a disabled debug event), and every part it
    # would take from structlog's global configuration is given here anyway.
    return HermesLogger(logging.getLogger(stdlib_name(name)), processors=_PROCESSORS, context=dict(initial))


# --- output, for the CLI (or a host that wants our rendering) ------------------------------


class EventFormatter(logging.Formatter):
    """Renders a record's ``hermes_event`` as one JSON object or a console line."""

    def __init__(self, fmt: LogFormat, *, colors: bool = False, tracebacks: bool = False) -> None:
        super().__init__()
        self.fmt = fmt
        self.tracebacks = tracebacks
        self._console = structlog.dev.ConsoleRenderer(colors=colors)

    def format(self, record: logging.LogRecord) -> str:
        event = dict(getattr(record, "hermes_event", None) or {"event": record.getMessage()})
        event.setdefault("log_level", record.levelname.lower())
        event["timestamp"] = self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        if record.exc_info and self.tracebacks:
            event["exception"] = self.formatException(record.exc_info)
        if self.fmt == "json":
            return json.dumps(event, default=str, ensure_ascii=False)
        event["level"] = event.pop("log_level")
        return str(self._console(None, record.levelname.lower(), event))


class _CliHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler the CLI installed, so a second configure replaces it."""


def configure_logging(
    *,
    verbosity: int = 0,
    log_format: LogFormat | None = None,
    color: bool | None = None,
    shown_elsewhere: frozenset[str] = frozenset(),
) -> None:
    """Send hermes-core's log records to stderr (data stays alone on stdout). CLI use.

    ``verbosity`` 0 shows warnings, 1 info, 2 and more debug (``--trace-hooks`` events are
    debug). The renderer is the console one on a TTY and JSON otherwise, unless forced;
    colours only on a TTY and never when ``NO_COLOR`` is set. Warning records of the loggers in
    ``shown_elsewhere`` are left out at verbosity 0 (the caller prints them itself, once).
    """
    import os

    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    tty = sys.stderr.isatty()
    fmt: LogFormat = log_format or ("console" if tty else "json")
    if color is None:
        color = tty and not os.environ.get("NO_COLOR")
    for handler in list(_root.handlers):
        if isinstance(handler, _CliHandler):
            _root.removeHandler(handler)
    handler = _CliHandler(sys.stderr)
    handler.setFormatter(EventFormatter(fmt, colors=bool(color), tracebacks=verbosity >= 1))
    if shown_elsewhere and verbosity <= 0:
        handler.addFilter(lambda record: not (
            record.name in shown_elsewhere and record.levelno == logging.WARNING
        ))
    _root.addHandler(handler)
    _root.setLevel(level)
    # The CLI is the application: its records stop here instead of reaching a root handler.
    _root.propagate = False


def reset_logging() -> None:
    """Undo ``configure_logging`` (tests; a host that ran the CLI in-process)."""
    for handler in list(_root.handlers):
        if isinstance(handler, _CliHandler):
            _root.removeHandler(handler)
    _root.setLevel(logging.NOTSET)
    _root.propagate = True

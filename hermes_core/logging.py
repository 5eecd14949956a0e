"""structlog set-up for the CLI. Library code only asks for loggers; it never configures."""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

LogFormat = Literal["console", "json"]


def configure_logging(*, verbosity: int = 0, log_format: LogFormat | None = None) -> None:
    """Send structlog events to stderr (data stays alone on stdout).

    ``verbosity`` 0 shows warnings, 1 info, 2 and more debug (``--trace-hooks`` events are
    debug). The renderer is the console one on a TTY and JSON otherwise unless forced.
    """
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    fmt = log_format or ("console" if sys.stderr.isatty() else "json")
    processors: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if verbosity >= 1:
        processors.append(structlog.processors.format_exc_info)
    else:
        processors.append(_drop_exc_info)
    if fmt == "json":
        processors.append(structlog.processors.JSONRenderer(default=str))
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty()))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _drop_exc_info(
    logger: object, method: str, event_dict: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    # Tracebacks are for -v; at the default level the event and its keys say enough.
    event_dict.pop("exc_info", None)
    return event_dict

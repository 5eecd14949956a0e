"""Warnings the host can show its user, collected per build in a ContextVar.

Deep code calls ``record_warning``; the Session drains the collector into ``Session.warnings``.
A ContextVar bound per build (``collecting()``), so concurrent sessions never mix warnings; not a
parameter, because every function that can warn, plugins' included, would have to carry it.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import attrs

from hermes_core.logging import get_logger
from hermes_core.redaction import redact_text

log = get_logger("hermes_core.diagnostics")


@attrs.frozen(kw_only=True)
class HostWarning:
    """A warning the host can show its user: what happened, and where.

    ``kind`` is the snake_case event name (``context_file_truncated``, ``plugin_failed`` ...);
    ``message`` is a sentence for a human; ``plugin`` and ``path`` name the culprit when known.
    """

    kind: str
    message: str
    plugin: str | None = None
    path: str | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)


_collector: ContextVar[list[HostWarning] | None] = ContextVar(
    "hermes_warning_collector", default=None
)


def record_warning(
    kind: str,
    message: str,
    *,
    plugin: str | None = None,
    path: str | None = None,
    **details: Any,
) -> HostWarning:
    """Log ``kind`` as a structlog warning event and keep it for the host to show (its
    message with any secret it quotes masked: a warning is shown on screen)."""
    message = redact_text(message)
    warning = HostWarning(kind=kind, message=message, plugin=plugin, path=path, details=details)
    context = {k: v for k, v in (("plugin", plugin), ("path", path)) if v is not None}
    log.warning(kind, message=message, **context, **details)
    bucket = _collector.get()
    if bucket is None:
        bucket = []
        _collector.set(bucket)
    bucket.append(warning)
    return warning


def drain_warnings() -> list[HostWarning]:
    """Return the warnings recorded in this context so far and clear them (in place)."""
    bucket = _collector.get()
    if not bucket:
        return []
    drained = list(bucket)
    bucket.clear()
    return drained


class collecting:  # noqa: N801 - used like the function it replaced: ``with collecting() as b``
    """Bind a fresh collector for one build; ``with collecting() as bucket`` gives the list
    that fills up. A class, not a generator context manager: it wraps every tool call and
    assembly of a turn, and a generator costs four Python frames per use."""

    __slots__ = ("bucket", "_token")

    def __enter__(self) -> list[HostWarning]:
        self.bucket: list[HostWarning] = []
        self._token = _collector.set(self.bucket)
        return self.bucket

    def __exit__(self, *exc: object) -> None:
        _collector.reset(self._token)

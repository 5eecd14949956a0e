"""Exceptions hermes-core raises on purpose, each with a message a user can act on."""

from __future__ import annotations


class HermesError(Exception):
    """Base class of every hermes-core error."""


class ConfigError(HermesError):
    """A configuration value is invalid. The message names the key path, value and file."""

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        value: object = None,
        path: str | None = None,
        line: int | None = None,
    ) -> None:
        super().__init__(message)
        self.key = key
        self.value = value
        self.path = path
        self.line = line


class HermesPluginError(HermesError):
    """A plugin could not be loaded or registered, or two plugins collide."""


class UnknownEngineError(ConfigError):
    """``context.engine`` names an engine no plugin provides."""

    def __init__(self, name: str, available: list[str], *, path: str | None = None) -> None:
        listing = ", ".join(sorted(available)) or "(none)"
        super().__init__(
            f"context.engine: unknown engine {name!r}; available engines: {listing}"
            + (f" (in {path})" if path else ""),
            key="context.engine",
            value=name,
            path=path,
        )
        self.name = name
        self.available = sorted(available)


class InvalidMessagesError(HermesError):
    """A message list is malformed. ``index`` is the offending message's position."""

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class ContextOverflowError(HermesError):
    """The conversation no longer fits the window and compression cannot help (or is off)."""


class StoreError(HermesError):
    """A session store or archive could not be read or written: the disk is full, the file
    cannot be opened, the server does not answer. ``store`` names the file or server."""

    def __init__(self, message: str, *, store: str | None = None) -> None:
        super().__init__(message)
        self.store = store

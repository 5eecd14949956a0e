"""hermes-core: context engineering for LLM agents, as pluggy plugins.

The public API: ``Session``, ``ContextEngine``, ``hookimpl``, the frozen records that cross hook
boundaries, ``PluginHost`` and the configuration model. Every name is imported on first use
(module ``__getattr__``), so ``import hermes_core`` costs next to nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_core.aio import AsyncSession
    from hermes_core.config import Config, load_config
    from hermes_core.content_tokens import content_tokens
    from hermes_core.conversion import RequestReport
    from hermes_core.diagnostics import HostWarning, drain_warnings, record_warning
    from hermes_core.engine import CompressionReport, ContextEngine, coerce_usage
    from hermes_core.errors import (
        ConfigError,
        ContextOverflowError,
        HermesError,
        HermesPluginError,
        InvalidMessagesError,
        StoreError,
        UnknownEngineError,
    )
    from hermes_core.frozen import FrozenTools, freeze_tools
    from hermes_core.hookspecs.markers import hookimpl, hookspec
    from hermes_core.host import PluginHost, refresh_plugins
    from hermes_core.logging import get_logger
    from hermes_core.records import (
        ContextFile,
        ContextFileLoader,
        EngineSpec,
        PayloadContext,
        PluginRecord,
        PromptBlock,
        PromptContext,
        SkillSource,
        ToolCallContext,
        ToolsContext,
        Usage,
    )
    from hermes_core.sdk import as_message, normalize_messages
    from hermes_core.session import Session
    from hermes_core.session_options import SessionOptions
    from hermes_core.turn import TurnResult

#: Where each public name lives (imported on first access).
_LAZY: dict[str, str] = {
    "AsyncSession": "hermes_core.aio",
    "CompressionReport": "hermes_core.engine",
    "Config": "hermes_core.config",
    "ConfigError": "hermes_core.errors",
    "ContextEngine": "hermes_core.engine",
    "ContextFile": "hermes_core.records",
    "ContextFileLoader": "hermes_core.records",
    "ContextOverflowError": "hermes_core.errors",
    "EngineSpec": "hermes_core.records",
    "FrozenTools": "hermes_core.frozen",
    "HermesError": "hermes_core.errors",
    "HermesPluginError": "hermes_core.errors",
    "HostWarning": "hermes_core.diagnostics",
    "InvalidMessagesError": "hermes_core.errors",
    "PayloadContext": "hermes_core.records",
    "PluginHost": "hermes_core.host",
    "PluginRecord": "hermes_core.records",
    "PromptBlock": "hermes_core.records",
    "PromptContext": "hermes_core.records",
    "RequestReport": "hermes_core.conversion",
    "Session": "hermes_core.session",
    "SessionOptions": "hermes_core.session_options",
    "SkillSource": "hermes_core.records",
    "StoreError": "hermes_core.errors",
    "ToolCallContext": "hermes_core.records",
    "ToolsContext": "hermes_core.records",
    "TurnResult": "hermes_core.turn",
    "UnknownEngineError": "hermes_core.errors",
    "Usage": "hermes_core.records",
    "as_message": "hermes_core.sdk",
    "coerce_usage": "hermes_core.engine",
    "content_tokens": "hermes_core.content_tokens",
    "drain_warnings": "hermes_core.diagnostics",
    "freeze_tools": "hermes_core.frozen",
    "get_logger": "hermes_core.logging",
    "hookimpl": "hermes_core.hookspecs.markers",
    "hookspec": "hermes_core.hookspecs.markers",
    "load_config": "hermes_core.config",
    "normalize_messages": "hermes_core.sdk",
    "record_warning": "hermes_core.diagnostics",
    "refresh_plugins": "hermes_core.host",
}

__all__ = [
    "AsyncSession",
    "CompressionReport",
    "Config",
    "ConfigError",
    "ContextEngine",
    "ContextFile",
    "ContextFileLoader",
    "ContextOverflowError",
    "EngineSpec",
    "FrozenTools",
    "HermesError",
    "HermesPluginError",
    "HostWarning",
    "InvalidMessagesError",
    "PayloadContext",
    "PluginHost",
    "PluginRecord",
    "PromptBlock",
    "PromptContext",
    "RequestReport",
    "Session",
    "SessionOptions",
    "SkillSource",
    "StoreError",
    "ToolCallContext",
    "ToolsContext",
    "TurnResult",
    "UnknownEngineError",
    "Usage",
    "__version__",
    "as_message",
    "coerce_usage",
    "content_tokens",
    "drain_warnings",
    "freeze_tools",
    "get_logger",
    "hookimpl",
    "hookspec",
    "load_config",
    "normalize_messages",
    "record_warning",
    "refresh_plugins",
]


def __getattr__(name: str) -> Any:
    import importlib

    where = _LAZY.get(name)
    if where is not None:
        value = getattr(importlib.import_module(where), name)
        globals()[name] = value  # the next access is a plain module attribute
        return value
    if name == "__version__":
        # Looked up on first use: reading the installed distributions' metadata costs
        # milliseconds that an import should not pay.
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("hermes-core")
        except PackageNotFoundError:  # imported from a checkout that was never installed
            found = "0+unknown"
        globals()[name] = found
        return found
    if not name.startswith("__"):
        # A submodule not imported yet (``hermes_core.config`` after a bare import).
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

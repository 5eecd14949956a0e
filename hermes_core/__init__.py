"""hermes-core: context engineering for LLM agents, as pluggy plugins.

The public API: ``Session`` (one conversation), ``ContextEngine`` (subclass it to ship an
engine), ``hookimpl`` (mark hook implementations), the frozen records that cross hook
boundaries, ``PluginHost`` and the configuration model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.config import Config, load_config
from hermes_core.diagnostics import drain_warnings, record_warning
from hermes_core.engine import CompressionReport, ContextEngine, coerce_usage
from hermes_core.errors import (
    ConfigError,
    ContextOverflowError,
    HermesError,
    HermesPluginError,
    InvalidMessagesError,
    UnknownEngineError,
)
from hermes_core.frozen import FrozenTools, freeze_tools
from hermes_core.hookspecs import hookimpl, hookspec
from hermes_core.logging import get_logger
from hermes_core.host import PluginHost, refresh_plugins
from hermes_core.records import (
    ContextFile,
    ContextFileLoader,
    EngineSpec,
    HostWarning,
    PayloadContext,
    PluginRecord,
    PromptBlock,
    PromptContext,
    SkillSource,
    ToolCallContext,
    ToolsContext,
    Usage,
)

from hermes_core.session_options import SessionOptions

if TYPE_CHECKING:
    from hermes_core.aio import AsyncSession
    from hermes_core.sdk import as_message, normalize_messages
    from hermes_core.session import Session

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
    "Session",
    "SessionOptions",
    "SkillSource",
    "ToolCallContext",
    "ToolsContext",
    "UnknownEngineError",
    "Usage",
    "__version__",
    "as_message",
    "coerce_usage",
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
    # Session pulls in the assembler and stores; keep `import hermes_core` light.
    if name == "Session":
        from hermes_core.session import Session

        return Session
    if name == "__version__":
        # Looked up on first use: reading the installed distributions' metadata costs
        # milliseconds that an import should not pay.
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("hermes-core")
        except PackageNotFoundError:  # imported from a checkout that was never installed
            return "0+unknown"
    if name == "AsyncSession":
        from hermes_core.aio import AsyncSession

        return AsyncSession
    if name in ("as_message", "normalize_messages"):
        from hermes_core import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module 'hermes_core' has no attribute {name!r}")

"""Registers the built-in ``compressor`` engine (the default ``context.engine``) and the offline
``extractive`` summariser it uses by default (``compression.summary.provider: extractive``).

Both registrations are ordinary hook implementations: block this plugin (``--disable
compressor``) and register your own engine or summariser under the same names to replace them.
"""

from __future__ import annotations

from typing import Any

from hermes_core.plugin import ContextEngine, hookimpl
from hermes_plugins.compressor.engine import CompressorEngine
from hermes_plugins.compressor.extractive import ExtractiveSummarizer

__all__ = ["CompressorEngine", "ExtractiveSummarizer"]


@hookimpl(trylast=True)
def hermes_context_engines() -> dict[str, type[ContextEngine]]:
    return {"compressor": CompressorEngine}


@hookimpl(trylast=True)
def hermes_summarizers() -> dict[str, Any]:
    return {"extractive": ExtractiveSummarizer}

"""Registers the built-in ``compressor`` engine (the default ``context.engine``)."""

from __future__ import annotations

from typing import Any

from hermes_core import ContextEngine, hookimpl


class CompressorEngine(ContextEngine):
    """Placeholder until the full compressor lands: tracks usage, never compresses."""

    name = "compressor"

    def compress(
        self,
        messages: list[dict[str, Any]],
        current_tokens: int | None = None,
        focus_topic: str | None = None,
        force: bool = False,
    ) -> list[dict[str, Any]]:
        return messages


@hookimpl(trylast=True)
def hermes_context_engines() -> dict[str, type[ContextEngine]]:
    return {"compressor": CompressorEngine}

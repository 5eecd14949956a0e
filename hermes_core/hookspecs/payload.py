"""Hooks for the request payload a provider receives."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.records import PayloadContext


class PayloadSpecs:
    @hookspec(firstresult=True)
    def hermes_payload_cache_layout(
        self, payload: dict[str, Any], ctx: PayloadContext
    ) -> dict[str, Any] | None:
        """Lay out prompt-cache markers (breakpoints, cache keys) for one provider.

        Called: once per request, by ``Session.request``, after the payload is canonicalised.

        Args:
            payload: ``{"system": str, "messages": [...], "tools": [...]}``; do not mutate it,
                copy only what you mark. When ``ctx.messages_writable`` is true the messages
                list was made for this call: set its items in place rather than copy it (the
                messages themselves are still never mutated).
            ctx: the provider, model, session id and configured cache TTL, and
                ``user_breakpoints``: ``cache_control`` markers the history carries itself
                (the host's own, kept on the wire): Anthropic takes four in all, so place at
                most ``4 - ctx.user_breakpoints`` and none on a message that carries one.

        Returns:
            The payload with the provider's cache layout (the built-in marks Anthropic's
            ``system_and_3`` breakpoints and adds an OpenAI ``prompt_cache_key``); ``None`` when
            this plugin has no layout for ``ctx.provider``.

        Semantics: firstresult; the built-in is ``trylast`` so a plugin adds Gemini or Bedrock
            layouts by answering for its provider.

        .. versionadded:: 0.1
        """

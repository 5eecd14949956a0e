"""Hooks for context engines: registration and one hook per lifecycle step.

The selected engine's own method runs as the ``trylast`` implementation of each step hook (the
core's dispatcher calls ``engine.<step>(...)``), so any plugin can observe or time a step with a
``wrapper=True`` implementation, or replace its result by returning non-``None`` first. The
engine instance is an argument, so many sessions, each with its own engine, share one host.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.engine import ContextEngine
    from hermes_core.records import Usage


class EngineSpecs:
    @hookspec
    def hermes_context_engines(self) -> Mapping[str, type[ContextEngine]] | None:
        """Register context engines by name.

        Called: when the host first needs the engine list (``Session.open``,
        ``hermes-ctx engines``); cached per host.

        Args: none.

        Returns:
            A mapping of engine name to a ``ContextEngine`` subclass, e.g.
            ``{"window": WindowEngine}``; ``None`` registers nothing.

        Semantics: collect - every implementation is called. Two plugins registering the same
            name is an error that names both distributions. ``context.engine`` in config
            selects one by name (default ``compressor``).

        Example:
            ``@hookimpl def hermes_context_engines(): return {"window": WindowEngine}``

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_engine_on_session_start(
        self, engine: ContextEngine, session_id: str, boundary_reason: str | None
    ) -> Any:
        """Start (or re-start after a compression) the engine's session.

        Called: by ``Session.open`` with ``boundary_reason=None``, and after every compression
            with ``boundary_reason="compression"`` (the session id stays the same).

        Args:
            engine: the session's engine instance.
            session_id: the session id.
            boundary_reason: ``None`` at a real start, ``"compression"`` after a compaction.

        Returns:
            Ignored; the dispatcher returns ``True`` once the engine ran.

        Semantics: firstresult; the engine's ``on_session_start`` runs as the ``trylast``
            implementation. Wrappers observe.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_engine_update_from_response(self, engine: ContextEngine, usage: Usage) -> Any:
        """Feed the provider's usage of the last call to the engine.

        Called: after every LLM response (``Session.after_response``).

        Args:
            engine: the session's engine instance.
            usage: the normalised provider usage; only prompt tokens decide compression.

        Returns:
            Ignored; the dispatcher returns ``True`` once the engine ran.

        Semantics: firstresult; the engine's ``update_from_response`` runs as ``trylast``.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_engine_should_compress(
        self, engine: ContextEngine, prompt_tokens: int | None
    ) -> tuple[bool, str | None] | None:
        """Decide whether the conversation should be compressed now.

        Called: after each response and before each request (with a rough estimate).

        Args:
            engine: the session's engine instance.
            prompt_tokens: the token figure to judge, or ``None`` for the engine's last real
                prompt tokens.

        Returns:
            ``(should, reason)``: ``reason`` names why a compression over the threshold is
            blocked (``"ineffective"``, ``"cooldown:<seconds>"``), else ``None``. A plugin may
            veto by returning ``(False, "vetoed:<why>")`` before the engine answers.

        Semantics: firstresult; the engine's ``should_compress_info`` runs as ``trylast``.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_engine_compress(
        self,
        engine: ContextEngine,
        messages: list[dict[str, Any]],
        current_tokens: int | None,
        focus_topic: str | None,
        force: bool,
    ) -> list[dict[str, Any]] | None:
        """Compress the conversation.

        Called: when ``should_compress`` said yes (automatic), on a context-overflow error,
            and on a manual ``/compress`` (``force=True``).

        Args:
            engine: the session's engine instance.
            messages: the OpenAI-format message list; never mutated.
            current_tokens: the token figure that triggered compression, when known.
            focus_topic: what the user asked the summary to keep (manual ``/compress``).
            force: ``True`` for a manual compression, which clears cooldowns and blocks.

        Returns:
            The new message list; returning the same list object means "no progress".

        Semantics: firstresult; the engine's ``compress`` runs as ``trylast``. A wrapper can
            time or audit a compression; an engine error leaves the messages unchanged.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_engine_on_session_end(
        self, engine: ContextEngine, session_id: str, messages: list[dict[str, Any]]
    ) -> Any:
        """End the engine's session at a real boundary (``Session.close``), never per turn.

        Called: once, by ``Session.close``.

        Args:
            engine: the session's engine instance.
            session_id: the session id.
            messages: the final message list.

        Returns:
            Ignored; the dispatcher returns ``True`` once the engine ran.

        Semantics: firstresult; the engine's ``on_session_end`` runs as ``trylast``.

        .. versionadded:: 0.1
        """

    @hookspec
    def hermes_engine_on_error(self, engine: ContextEngine, step: str, error: BaseException) -> None:
        """Observe an engine step that raised.

        Called: when the engine (or a plugin on a step hook) raises during ``step``; the session
            then keeps working - ``compress`` returns the messages unchanged, ``should_compress``
            answers ``(False, "error")`` - unless strict mode re-raises.

        Args:
            engine: the session's engine instance.
            step: the step name (``compress``, ``should_compress`` ...).
            error: the exception.

        Returns:
            Nothing; return values are ignored.

        Semantics: collect; every implementation is called.

        .. versionadded:: 0.1
        """

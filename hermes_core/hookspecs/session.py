"""Hooks for session-scoped services: the prompt store, summarisers, tokenizers, probes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.tokens import Tokenizer


class SessionSpecs:
    @hookspec(firstresult=True)
    def hermes_session_store(self, home: Path, config: Config) -> Any:
        """Provide the store that keeps each session's built system prompt.

        Called: once per ``Session.open``.

        Args:
            home: the resolved ``HERMES_HOME``.
            config: the effective configuration.

        Returns:
            An object with ``get_prompt(session_id) -> str | None`` and
            ``put_prompt(session_id, prompt, *, model, provider) -> None``; ``None`` lets the
            next implementation answer. The built-in is SQLite under ``HERMES_HOME`` (WAL mode).
            Optionally also ``get_static_prefix(session_id) -> int | None``; a store that has
            it is given ``put_prompt(..., static_prefix=n)`` (the stable layer's length), so a
            replayed prompt is split into the same cache blocks as the one first sent.
            A store that also has the archive methods (``archive_put``, ``archive_get``,
            ``archive_search``, ``archive_refs``, ``archive_stats``; optionally
            ``archive_flush``, ``archive_sessions``, ``archive_prune``, ``archive_delete``: see
            docs/recall.md) keeps the archive plugin's entries too; otherwise the archive
            lives in memory for the Session's life.

        Semantics: firstresult; the built-in is ``trylast`` so a shared store (one database
            for many workers) replaces it by answering first.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_session_compacted(
        self, session: Any, before: list[dict[str, Any]], after: list[dict[str, Any]], phase: str
    ) -> list[dict[str, Any]] | None:
        """Record what one compaction took out of the context (the archive plugin's hook).

        Called: once per engine step that changed the messages (``compress``, or the further
            passes of a fit), under the compaction lease, before the loop checks the fit.

        Args:
            session: the ``Session`` compacted (``session.plugin_state`` keeps a plugin's
                per-session object; ``session.store`` the session store).
            before: the list the engine was given; ``after``: the list it returned. A message
                of ``before`` kept by the engine is the same object in ``after`` (an engine
                that copies is matched by content); the rest left the context or was rewritten.
            phase: ``preflight``, ``post_response``, ``overflow`` or ``manual``.

        Returns:
            The kept history to use instead of ``after`` (the built-in archive adds its
            ``[ref m41.3]`` marks and ``_ref`` metadata to the replacements, a new list, the
            engine's dicts untouched); ``None`` keeps ``after`` as it is (an observer).

        Semantics: firstresult: the first list answered wins; the built-in ``archive`` is
            ``trylast``, so a replacement archive answers first. A plugin that raises loses
            its answer only: the compaction stands.

        .. versionadded:: 0.3
        """

    @hookspec
    def hermes_summarizers(self) -> Mapping[str, Any] | None:
        """Register summarisers by provider name (``compression.summary.provider``).

        Called: when an engine needs its summariser (once per engine instance).

        Args: none.

        Returns:
            A mapping of provider name to a factory ``factory(config) -> Summarizer``. The
            built-ins register ``extractive`` (offline, deterministic), ``openai`` and
            ``anthropic``.

        Semantics: collect; two plugins registering the same name is an error naming both.

        Example:
            ``@hookimpl def hermes_summarizers(): return {"mine": MySummarizer}``

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_tokenizer(self, model: str) -> Tokenizer | None:
        """Provide the exact tokenizer for a model family.

        Called: the first time a session needs an exact count for ``model``; cached per model.

        Args:
            model: the model name as the session knows it.

        Returns:
            A ``hermes_core.tokens.Tokenizer``; ``None`` lets the next implementation answer and,
            when nobody does, the bundled cl100k_base counter is used.

        Semantics: firstresult.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_environment_runner(self, backend: str) -> Any:
        """Provide the command runner for a remote terminal backend's environment probe.

        Called: once per (backend, cwd) per process, when the environment block is built for
            a remote backend (docker, ssh, modal, daytona, singularity); the probe result,
            failures included, is cached for the process.

        Args:
            backend: the backend name.

        Returns:
            A callable ``runner(command: str, timeout: float) -> str`` that runs ``command`` in
            the backend and returns its standard output (raising on failure); ``None`` when
            this plugin cannot reach that backend.

        Semantics: firstresult.

        .. versionadded:: 0.1
        """

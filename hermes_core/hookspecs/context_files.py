"""Hooks for the project context-file loaders (HERMES.md, AGENTS.md, CLAUDE.md, .cursorrules)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.hookspecs import hookspec

if TYPE_CHECKING:
    from hermes_core.records import ContextFileLoader, PromptContext


class ContextFileSpecs:
    @hookspec
    def hermes_context_file_loaders(
        self, ctx: PromptContext
    ) -> ContextFileLoader | Sequence[ContextFileLoader] | None:
        """Declare context-file loaders, each with a name and a rank.

        Called: once per system-prompt build, by the ``context_files`` block, before any file
        is read.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            One ``ContextFileLoader`` or several. Built-in ranks: ``hermes_md`` 1,
            ``agents_md`` 2, ``claude_md`` 3, ``cursorrules`` 4. ``None`` declares nothing.

        Semantics: collect - every implementation is called. Loaders are then tried by
            ascending rank, independent of registration order, and the first that finds any
            file wins; the others are never called. A loader whose name is already taken by a
            loader from a plugin called earlier is dropped, so a third party replaces a
            built-in (built-ins are ``trylast``) by declaring a loader with its name.

        Example:
            ``@hookimpl def hermes_context_file_loaders(ctx): return ContextFileLoader(
            name="gemini_md", rank=2.5, load=load_gemini_md)``

        .. versionadded:: 0.1
        """

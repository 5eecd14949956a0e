"""Hooks for the tool side: the tool definitions the model sees and each tool result."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.records import ToolCallContext, ToolsContext


class ToolSpecs:
    @hookspec(firstresult=True)
    def hermes_tools_assemble(
        self, tools: Sequence[dict[str, Any]], ctx: ToolsContext
    ) -> list[dict[str, Any]] | None:
        """Assemble the tool definitions sent to the model for this turn.

        Called: once per request, with the live tool definitions (never a cached catalog).

        Args:
            tools: OpenAI-format tool definitions; each may carry a ``source`` key.
            ctx: the turn's ``ToolsContext`` (window, config).

        Returns:
            The definitions the model sees (the built-in replaces deferrable tools by the
            ``tool_search`` / ``tool_describe`` / ``tool_call`` bridge); ``None`` keeps
            ``tools`` as they are.

        Semantics: firstresult; the built-in is ``trylast``. Must be idempotent: assembling an
            already assembled list gives the same list.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_tool_result_process(self, content: Any, ctx: ToolCallContext) -> Any:
        """Process one tool result before it enters the conversation.

        Called: once per tool result (never per history message), after the tool ran and
            before the result message is appended.

        Args:
            content: the result content (a string, or a list of content parts).
            ctx: what is known about the call (tool name, call id, arguments, window).

        Returns:
            The content to keep (the built-in applies output limits, then spills a result over
            its threshold to a file and returns a preview block); ``None`` keeps it unchanged.

        Semantics: firstresult; the built-in is ``trylast``; wrappers may post-process.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_tool_results_turn_budget(
        self, results: list[dict[str, Any]], ctx: ToolsContext
    ) -> list[dict[str, Any]] | None:
        """Fit all tool results of one turn into the per-turn budget.

        Called: once per turn, after every tool of the turn returned.

        Args:
            results: the turn's tool result messages (``role: tool``).
            ctx: the turn's ``ToolsContext``.

        Returns:
            The result messages to keep (the built-in spills the largest first until the turn
            fits); ``None`` keeps them as they are.

        Semantics: firstresult; the built-in is ``trylast``.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_tool_result_writer(self, environment: Any) -> Any:
        """Provide the writer that stores a spilled tool result where the tools can read it.

        Called: when a tool result is spilled to a file.

        Args:
            environment: the terminal environment object of the session (``None`` = local).

        Returns:
            A callable ``writer(content: str, name: str) -> str | None`` returning the path the
            tools can read, or ``None`` on failure; remote writers must pass the content on
            standard input, never in a command line. ``None`` lets the next answer.

        Semantics: firstresult; the built-in local writer is ``trylast``.

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_tool_call(
        self, name: str, arguments: Mapping[str, Any], ctx: ToolCallContext
    ) -> Any:
        """Answer a call of a tool the framework itself provides.

        Called: by ``Session.handle_tool_call`` when the model called a tool that hermes-core
            or a plugin added to the request (the ``tool_search`` / ``tool_describe`` /
            ``tool_call`` bridge, the recall tools ``context_search`` / ``context_expand``),
            once per call.

        Args:
            name: the tool the model called.
            arguments: its arguments, parsed from the call's JSON (``{}`` when there were none).
            ctx: the call's ``ToolCallContext``; ``ctx.session`` is the answering ``Session``.

        Returns:
            The result for the model (a string, usually JSON; errors are results too, never
            exceptions), or ``None`` when the tool is not this plugin's.

        Semantics: firstresult: the first plugin that knows the tool answers.

        .. versionadded:: 0.2
        """

"""One hook per system-prompt block.

The assembler (``hermes_core.prompt.PROMPT_TABLE``) calls these in its table's order and puts
each result in the layer the table names. Every hook takes the same ``ctx`` and returns one
``PromptBlock``, a sequence of them, or ``None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.records import PromptBlock, PromptContext


class PromptSpecs:
    @hookspec(firstresult=True)
    def hermes_prompt_identity(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the identity block: who the agent is.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        The built-in answers with ``ctx.identity`` when the host gave one
        (``Session.open(identity=...)``), else reads ``$HERMES_HOME/SOUL.md`` and falls back to
        hermes-core's default identity, marked ``meta={"default_identity": True}`` (the assembler
        then sets ``ctx.default_identity`` so the blocks about Hermes itself apply); a block whose
        ``source`` is the SOUL.md path tells the assembler SOUL.md is loaded (``ctx.soul_loaded``),
        and so does ``meta={"soul_refused": path}``: SOUL.md is there but unusable and the
        identity has warned about it, so the context-file block does not try it again.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``identity`` block(s); an empty sequence leaves them out; ``None``: no opinion, the
            next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_general_guidance(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the general guidance blocks: help, task completion, parallel tool calls.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Task-completion and parallel-call guidance appear only when the session has tools.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``help, task_completion, parallel_tool_calls`` block(s); an empty sequence leaves
            them out; ``None``: no opinion, the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_tool_guidance(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the tool-specific guidance block and the steer-channel note.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Memory / user profile / session search / skills / kanban pieces joined by one space; the steer
        note only with tools and not on the ``cron`` platform.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``tool_guidance, steer_note`` block(s); an empty sequence leaves them out; ``None``:
            no opinion, the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_model_guidance(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the model-family guidance blocks.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Gated by ``agent.tool_use_enforcement`` and ``agent.execution_guidance`` (true/false words, a
        list of model-name fragments, or ``auto``); the Google block only inside enforcement.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``tool_use_enforcement, google_guidance, execution_guidance`` block(s); an empty
            sequence leaves them out; ``None``: no opinion, the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_skills_index(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the skills index block (``## Skills (mandatory)``).

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Only when a skills tool (``skills_list``, ``skill_view``, ``skill_manage``) is present.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``skills_index`` block(s); an empty sequence leaves them out; ``None``: no opinion,
            the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_environment(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the environment facts block (host or remote backend).

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Local backends describe the host; remote backends run one cached probe through a runner.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``environment`` block(s); an empty sequence leaves them out; ``None``: no opinion,
            the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_platform_hint(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the platform hint block (cli, telegram, discord, cron ...).

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Overridable from config ``platform_hints.<platform>`` (a string appends; ``{replace, append}``).

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``platform`` block(s); an empty sequence leaves them out; ``None``: no opinion, the
            next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_context_files(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the project context block built from the context-file loaders.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        The built-in asks ``hermes_context_file_loaders`` for loaders, tries them by rank (first that
        finds something wins), sizes each source to the window and frames them under
        ``# Project Context``.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``context_files`` block(s); an empty sequence leaves them out; ``None``: no opinion,
            the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_memory(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the frozen memory snapshot blocks (MEMORY.md, USER.md).

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Read from ``$HERMES_HOME/memories`` when the prompt is built; writes during the session reach
        the prompt only at the next build.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``memory, user_profile`` block(s); an empty sequence leaves them out; ``None``: no
            opinion, the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_external_memory(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the block an external memory provider contributes.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        Nothing is built in; a memory-provider plugin answers.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``external_memory`` block(s); an empty sequence leaves them out; ``None``: no
            opinion, the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

    @hookspec(firstresult=True)
    def hermes_prompt_session_line(
        self, ctx: PromptContext
    ) -> PromptBlock | Sequence[PromptBlock] | None:
        """Return the date / session / model line that closes the prompt.

        Called: once per system-prompt build (the first request of a session, and once after
        each compression); never per turn.

        ``Conversation started: <Weekday>, <Month> <DD>, <YYYY>`` with a zone suffix, then the
        optional Session ID / Model / Provider / Platform lines; day precision keeps it byte-stable.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            The ``session_line`` block(s); an empty sequence leaves them out; ``None``: no opinion,
            the next implementation answers.

        Semantics: firstresult - the first non-``None`` result wins; the built-in is ``trylast``
            (any other implementation replaces it); wrappers may edit the result; a raising
            implementation costs its block and a warning naming it (strict mode raises).

        .. versionadded:: 0.1
        """

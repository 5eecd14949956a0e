"""Hooks for the project context-file loaders (HERMES.md, AGENTS.md, CLAUDE.md, .cursorrules)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.hookspecs.markers import hookspec

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

    @hookspec
    def hermes_context_scan(self, text: str, source: str, scope: str) -> Sequence[str] | None:
        """Scan text on its way into the system prompt for prompt injection.

        Called: while the prompt is built - once per project context file with scope
        ``"context"`` (the text that would reach the prompt, after sizing), once for SOUL.md
        (``"context"``), once per memory entry with scope ``"strict"``, and once for the skills
        index when it is built (``"context"``, source ``"skills index"``; line by line when
        that finds something).

        Args:
            text: the text, a leading BOM removed.
            source: what it is, for messages: ``"AGENTS.md"``, ``"MEMORY.md"`` ...
            scope: ``"context"`` (injection, promptware, role hijack) or ``"strict"`` (that
                plus credential, persistence and exfiltration patterns).

        Returns:
            The ids of what was found (``["prompt_injection"]``); empty or ``None`` when clean.

        Semantics: collect - every scanner is called and the findings are united. In a project
            context file, ids in ``hermes_plugins._common.screening.LOW_SEVERITY`` only warn; any other
            id (yours included) blocks: the file is scanned line by line and each line with
            such a finding becomes ``[BLOCKED: line <n> of <file> matched prompt-injection
            pattern(s) <ids>; removed]``; a finding no single line shows is narrowed to the
            shortest run of lines that shows it (``[BLOCKED: lines <a>-<b> of <file> ...]``),
            and only a file with more than half its non-blank lines cut is replaced whole by
            ``[BLOCKED: <file> contained potential prompt injection (<ids>). Content not
            loaded.]``. Warnings give each id's family and severity
            (``hermes_plugins._common.screening.FAMILIES``; an unknown id is its own family).
            ``threat_scan.allow`` accepts ids or lines per project. A memory entry
            with a blocking finding is replaced by a placeholder pointing to
            ``memory(action=remove)`` (low ids warn); a skill's index line is replaced by a
            marker naming the ids; SOUL.md (the user's own file) loads with a
            warning. A scanner that raises is reported and counts as clean. A memory store is
            scanned whole first and entry by entry only when that finds something, and a
            multi-line finding is narrowed by scanning parts of the file, so a scanner must
            flag any text that contains a passage it flags. The built-in ``threat_scan``
            normalises (NFKC, confusable skeletons, invisibles removed), decodes hidden
            payloads and covers the families of docs/context-files.md; block it to scan with
            your own only.

        Example:
            ``@hookimpl def hermes_context_scan(text, source, scope): return my_scanner(text)``

        .. versionadded:: 0.1
        """

"""Hooks for where skills come from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.records import PromptContext, SkillSource


class SkillSpecs:
    @hookspec
    def hermes_skills_sources(
        self, ctx: PromptContext
    ) -> SkillSource | Sequence[SkillSource] | None:
        """Declare directories of skills (``<category>/<skill>/SKILL.md`` trees).

        Called: when the skills index is built (once per system-prompt build, served from the
        index caches afterwards) and by ``hermes-ctx skills``.

        Args:
            ctx: the ``PromptContext`` of the session being built.

        Returns:
            One ``SkillSource`` or several; ``None`` adds nothing. The built-in declares
            ``$HERMES_HOME/skills`` (precedence 0) and ``skills.external_dirs`` (precedence 50).

        Semantics: collect - every implementation is called; on a name clash the source with
            the lower ``precedence`` wins, ties broken by path.

        Example:
            ``@hookimpl def hermes_skills_sources(ctx): return SkillSource(path=MY_DIR,
            label="acme", precedence=60)``

        .. versionadded:: 0.1
        """

"""The whole contract of hermes-core: one module of hook specs per area.

``hermes_core.hookimpl`` marks implementations; ``SPEC_CLASSES`` lists the spec classes in the
order ``hermes-ctx hooks`` shows them (which is also the order hooks run in a session).
"""

from __future__ import annotations

import pluggy

PROJECT = "hermes"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

from hermes_core.hookspecs.context_files import ContextFileSpecs  # noqa: E402
from hermes_core.hookspecs.engine import EngineSpecs  # noqa: E402
from hermes_core.hookspecs.host import HostSpecs  # noqa: E402
from hermes_core.hookspecs.payload import PayloadSpecs  # noqa: E402
from hermes_core.hookspecs.prompt import PromptSpecs  # noqa: E402
from hermes_core.hookspecs.session import SessionSpecs  # noqa: E402
from hermes_core.hookspecs.skills import SkillSpecs  # noqa: E402
from hermes_core.hookspecs.tools import ToolSpecs  # noqa: E402
from hermes_core.hookspecs.transcripts import TranscriptSpecs  # noqa: E402

SPEC_CLASSES: tuple[type, ...] = (
    HostSpecs,
    PromptSpecs,
    ContextFileSpecs,
    SkillSpecs,
    SessionSpecs,
    EngineSpecs,
    ToolSpecs,
    PayloadSpecs,
    TranscriptSpecs,
)

__all__ = ["PROJECT", "SPEC_CLASSES", "hookimpl", "hookspec"]

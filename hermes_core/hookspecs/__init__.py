"""The whole contract of hermes-core: one module of hook specs per area.

``hermes_core.hookimpl`` marks implementations; ``SPEC_CLASSES`` lists the spec classes in the
order ``hermes-ctx hooks`` shows them (which is also the order hooks run in a session).
"""

from __future__ import annotations

from hermes_core.hookspecs.context_files import ContextFileSpecs
from hermes_core.hookspecs.engine import EngineSpecs
from hermes_core.hookspecs.host import HostSpecs
from hermes_core.hookspecs.markers import PROJECT, hookimpl, hookspec
from hermes_core.hookspecs.payload import PayloadSpecs
from hermes_core.hookspecs.prompt import PromptSpecs
from hermes_core.hookspecs.report import ReportSpecs
from hermes_core.hookspecs.session import SessionSpecs
from hermes_core.hookspecs.skills import SkillSpecs
from hermes_core.hookspecs.tools import ToolSpecs
from hermes_core.hookspecs.transcripts import TranscriptSpecs

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
    ReportSpecs,
)

__all__ = ["PROJECT", "SPEC_CLASSES", "hookimpl", "hookspec"]

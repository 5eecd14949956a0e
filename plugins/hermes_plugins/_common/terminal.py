"""``terminal.backend``: where the agent's tools run (``TERMINAL_ENV``), declared by the
``environment`` plugin and read by it and the skills index (``docker`` skills)."""

from __future__ import annotations

from typing import Any

import attrs

from hermes_core.plugin import ConfigSection, field, string


@attrs.frozen(kw_only=True)
class TerminalSettings:
    backend: str = field("local", string(), doc="local, docker, ssh, modal, daytona, singularity")


TERMINAL = ConfigSection(
    name="terminal", model=TerminalSettings, doc="Where the agent's tools run.",
    env={"TERMINAL_ENV": "terminal.backend"},
)


def terminal_backend(ctx: Any) -> str:
    """The backend of a ``PromptContext``: the one it names (a host's, a test's), else the
    configured ``terminal.backend``; lower case, ``local`` when empty."""
    backend = ctx.backend or (ctx.config.section(TERMINAL).backend if ctx.config is not None else "")
    return str(backend or "local").strip().lower()

"""``SessionOptions``: everything a caller may say when opening a session, as one record.

``Session.open(SessionOptions(...))`` and ``Session.open(model=..., ...)`` are the same call; the
record is what a host keeps, copies with ``attrs.evolve`` and passes around.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from datetime import datetime

    from hermes_core.compaction_feedback import CompactionEvent
    from hermes_core.config import Config
    from hermes_core.host import PluginHost


@attrs.frozen(kw_only=True)
class SessionOptions:
    """What ``Session.open`` accepts (see its docstring for each option's meaning)."""

    cwd: str | os.PathLike[str] | None = None
    home: str | os.PathLike[str] | None = None
    model: str = ""
    provider: str = ""
    platform: str = ""
    tools: Sequence[Any] = ()
    toolsets: Sequence[str] = ()
    session_id: str | None = None
    system_message: str | None = None
    #: The host's own identity text ("You are Acme's support agent..."): it is the identity
    #: block, and no Hermes-specific text (identity, documentation pointer) enters the prompt.
    identity: str | None = None
    #: The window the caller knows (tokens); the engine's learned window wins once it has one.
    context_length: int | None = None
    max_tokens: int | None = None
    config: Config | None = None
    host: PluginHost | None = None
    env: Mapping[str, str] | None = None
    clock: Callable[[], datetime] | None = None  # session_open.Clock, which reads these options
    persist: bool = True
    on_status: Callable[[CompactionEvent], None] | None = None
    environment: Any = None
    invoke: Callable[[str, dict[str, Any]], Any] | None = None


def given_keywords(values: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``values`` that differ from ``SessionOptions``' defaults."""
    defaults = {f.name: f.default for f in attrs.fields(SessionOptions)}
    return {k: v for k, v in values.items() if k in defaults and v is not defaults[k] and v != defaults[k]}

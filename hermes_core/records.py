"""Frozen, keyword-only records that cross the hook boundary.

Many plugins see the same object, so every record here is immutable (derive a changed copy with
``attrs.evolve``) and keyword-only (fields can be added without breaking third-party
constructors). Per-message hot paths never build these: they are built once per phase or turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from hermes_core.config import Config

Layer = Literal["stable", "context", "volatile"]


def _frozenset_of_str(value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset(part.strip() for part in value.split(",") if part.strip())
    return frozenset(str(v) for v in value)


def _opt_path(value: Any) -> Path | None:
    # The session passes its home as a Path: kept as is (no new object per tool call).
    if value is None or isinstance(value, Path):
        return value
    return Path(value)


@attrs.frozen(kw_only=True)
class PromptContext:
    """Everything a prompt-block plugin may read about the session being built.

    ``soul_loaded`` is set by the assembler after the identity block so that the context-file
    blocks know SOUL.md is already the identity (or was refused by it, with a warning);
    ``default_identity`` likewise says the identity is hermes-core's own default (no SOUL.md,
    no ``identity`` from the host), so Hermes-specific blocks know they apply.
    ``backend`` names a terminal backend (``local``, ``docker``, ``ssh`` ...) for this build;
    ``None``: the configured ``terminal.backend`` (the environment plugin's key). ``env`` is the
    snapshot of environment variables the session was opened with (never ``os.environ``
    directly, so tests and workers stay isolated).
    """

    cwd: Path = attrs.field(converter=Path)
    home: Path = attrs.field(converter=Path)
    config: Config
    model: str = ""
    provider: str = ""
    platform: str = ""
    tools: frozenset[str] = attrs.field(default=frozenset(), converter=_frozenset_of_str)
    toolsets: frozenset[str] = attrs.field(default=frozenset(), converter=_frozenset_of_str)
    session_id: str = ""
    pass_session_id: bool = False
    context_length: int | None = None
    max_tokens: int | None = None
    system_message: str | None = None
    backend: str | None = None
    env: Mapping[str, str] = attrs.field(factory=dict)
    soul_loaded: bool = False
    #: The host's own identity (``Session.open(identity=...)``); ``None`` = not given.
    identity: str | None = None
    #: Set by the assembler after the identity block when that block is hermes-core's built-in
    #: default identity (``meta={"default_identity": True}``): only then do blocks that speak
    #: about Hermes itself (the documentation pointer, product names in platform hints) apply.
    default_identity: bool = False
    compact_skill_categories: frozenset[str] = attrs.field(
        default=frozenset(), converter=_frozenset_of_str
    )
    #: The ``PluginHost`` building this prompt, so a block can ask other hooks (the
    #: ``context_files`` block asks for loaders, the skills block for skill sources).
    host: Any = attrs.field(default=None, eq=False, repr=False)
    #: The session's clock (``() -> datetime``); ``None`` means the wall clock. Injected so
    #: tests and replays can pin the date line without patching ``datetime``.
    clock: Callable[[], Any] | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(kw_only=True)
class PromptBlock:
    """One named block of the system prompt.

    ``name`` is one of the block names of the assembler's table (``identity``, ``help``,
    ``tool_guidance`` ...); ``source`` is the file the text came from, when there is one.
    ``plugin`` is filled in by the assembler with the plugin that produced the block.
    """

    name: str
    text: str
    source: str | None = None
    plugin: str | None = None
    meta: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ContextFile:
    """One project context file (or one part of a chain) as a loader found it.

    ``chars`` is the original size in characters, ``kept_chars`` what reached the prompt after
    truncation; ``truncated`` says whether a marker replaced the middle; ``blocked`` holds the
    scanners' findings when the file was replaced by a placeholder (``hermes_context_scan``).
    """

    path: Path = attrs.field(converter=Path)
    label: str
    text: str
    loader: str = ""
    rank: float = 0.0
    chars: int = 0
    kept_chars: int = 0
    truncated: bool = False
    blocked: tuple[str, ...] = ()
    #: Lines the scan replaced by markers: ``{"line", "findings", "families", "text"}`` each.
    blocked_lines: tuple[Mapping[str, Any], ...] = ()
    #: Low-severity findings: warned about, the text kept.
    flagged: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class ContextFileLoader:
    """A context-file loader: a name, a rank and the function that finds files.

    Loaders are tried by ascending ``rank``; the first whose ``load`` returns any file wins and
    the others are not called. Two loaders with the same ``name``: the one from the plugin
    called first wins (built-ins are ``trylast``, so a third party replaces a built-in by
    returning a loader with its name).
    """

    name: str
    rank: float
    load: Callable[[PromptContext], tuple[ContextFile, ...]]
    patterns: tuple[str, ...] = ()
    description: str = ""


@attrs.frozen(kw_only=True)
class SkillSource:
    """A directory of skills. Lower ``precedence`` wins a name clash (local home skills are 0)."""

    path: Path = attrs.field(converter=Path)
    label: str = ""
    precedence: int = 100
    snapshot: bool = False


@attrs.frozen(kw_only=True)
class EngineSpec:
    """An engine registration as the host collected it."""

    name: str
    engine_class: type
    plugin: str
    distribution: str
    version: str


@attrs.frozen(kw_only=True)
class PluginRecord:
    """Provenance and status of one plugin, kept by the host (never in pluggy's private state)."""

    name: str
    distribution: str
    version: str
    module: str
    status: Literal["active", "blocked", "failed"]
    error: str | None = None
    hooks: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class HookImplInfo:
    plugin: str
    wrapper: bool
    tryfirst: bool
    trylast: bool


@attrs.frozen(kw_only=True)
class HookInfo:
    """One hook spec as ``hermes-ctx hooks`` shows it."""

    name: str
    area: str
    mode: Literal["firstresult", "collect", "historic"]
    args: tuple[str, ...]
    doc: str
    impls: tuple[HookImplInfo, ...]


@attrs.frozen(kw_only=True)
class Usage:
    """Provider-reported usage of one call, normalised from a dict or an SDK object."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@attrs.frozen(kw_only=True)
class ToolCallContext:
    """What a tool-side plugin may know about the call whose result it processes."""

    tool_name: str
    tool_call_id: str = ""
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    home: Path | None = attrs.field(default=None, converter=_opt_path)
    context_length: int | None = None
    config: Config | None = None
    environment: Any = None
    #: The ``PluginHost`` processing the result, so the pipeline can ask for the writer hook.
    host: Any = attrs.field(default=None, eq=False, repr=False)
    session_id: str = ""
    #: The ``Session`` answering the call (``Session.handle_tool_call``), or ``None``: the
    #: framework's own tools reach the session's state (live tool catalog, archive) through it.
    session: Any = attrs.field(default=None, eq=False, repr=False)
    #: ``invoke(tool_name, arguments)``: runs one of the host's tools (what the ``tool_call``
    #: bridge tool calls), or ``None`` when the host gave none.
    invoke: Any = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(kw_only=True)
class ToolsContext:
    """What the tool-definition assembler and the per-turn result budget know about the turn."""

    context_length: int | None = None
    config: Config | None = None
    session_id: str = ""
    #: Where spilled results go (``$HERMES_HOME``) and the session's terminal environment
    #: (``None`` = local), for the turn budget's writes.
    home: Path | None = attrs.field(default=None, converter=_opt_path)
    environment: Any = None
    #: The ``PluginHost`` running the hook, so the turn budget can ask for the writer hook.
    host: Any = attrs.field(default=None, eq=False, repr=False)
    #: The ``Session`` the tools are assembled for, or ``None`` (the recall tools are offered
    #: when its archive holds something).
    session: Any = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen(kw_only=True)
class PayloadContext:
    """What a provider payload-layout plugin knows about the request being built."""

    provider: str
    model: str = ""
    session_id: str = ""
    config: Config | None = None
    #: A TTL asked for this request (``hermes-ctx cache-report --ttl``); ``None``: the layout
    #: plugin's configured one (``prompt_caching.cache_ttl``).
    cache_ttl: str | None = None
    #: The start of the system text that stays put when the prompt is rebuilt (the stable
    #: layer: identity, guidance, skills, environment), or ``""`` when not known. A layout may
    #: cache it as its own block, so a rebuild that only changes memory keeps that entry.
    static_system_prefix: str = ""
    #: ``payload["messages"]`` is a list made for this call alone: the layout may set its
    #: items in place (mark a message) instead of copying the list, which at 100k messages
    #: costs as much as the rest of the request. Never mutate the messages themselves.
    messages_writable: bool = False
    #: ``cache_control`` markers the history itself carries on content blocks (the host's
    #: own breakpoints, kept on the wire): Anthropic takes four in all, so a layout places at
    #: most ``4 - user_breakpoints`` of its own.
    user_breakpoints: int = 0

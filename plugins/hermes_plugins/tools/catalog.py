"""Which tools are deferred, and what the catalog of deferred tools holds.

The catalog is derived from the live tool definitions every time it is needed (spec §16): a
catalog cached per session drifted from the real tool registry upstream and tools silently
vanished. What may be memoised is a pure function of the definitions (see ``bm25.py``).

A definition is OpenAI-format (``{"type": "function", "function": {name, description,
parameters}}``) or flat (``{name, description, parameters}``); either may carry ``source``
(``"mcp-github"``, ``"plugin-acme"`` ...). Malformed definitions are never deferred: they stay
visible, unchanged, so the provider (not this plugin) reports them.
"""

from __future__ import annotations

import functools
import json
import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from hermes_core.plugin import Config, FrozenTools, as_frozen_tools
from hermes_plugins.tools import bm25
from hermes_plugins.tools.settings import TOOLS, ToolSearchSection
from hermes_plugins.tools.sources import UNKNOWN_SOURCE, source_label
from hermes_plugins.tools.state import Classified, ToolSearchState, _Positions

TOOL_SEARCH = "tool_search"
TOOL_DESCRIBE = "tool_describe"
TOOL_CALL = "tool_call"
#: Reserved names: never deferred, never accepted from a tool provider as a real tool.
BRIDGE_TOOL_NAMES = frozenset({TOOL_SEARCH, TOOL_DESCRIBE, TOOL_CALL})

#: Tools the model always sees in full. The reference's exact list is not known (spec §20);
#: these are the tools it names as never deferred plus their close siblings. A name listed in
#: ``tools.search.defer`` leaves this set (that is what the defer list is for).
CORE_TOOLS = frozenset({
    "terminal", "process", "read_file", "write_file", "patch", "search_files", "todo",
    "memory", "clarify", "execute_code", "delegate_task", "send_message", "session_search",
    "web_search", "web_extract", "browser_navigate", "browser_snapshot", "browser_click",
    "browser_type", "browser_scroll", "browser_back", "browser_press", "browser_close",
    "browser_get_images", "browser_vision", "vision_analyze", "image_generate",
    "skills_list", "skill_view", "skill_manage", "cronjob", "text_to_speech",
    # The recall tools (hermes_plugins.archive.recall), offered once something is archived.
    "context_search", "context_expand",
    # GUI-surface tools: core, but deferred by the default defer list below.
    "computer_use", "read_window_below", "apply_layout", "list_windows", "focus_window",
})

#: ``tools.search.defer`` when unset: heavy GUI tools that most turns never need.
DEFAULT_DEFER = ("computer_use", "read_window_below", "apply_layout", "list_windows", "focus_window")

#: Sources whose tools drive the app's own surface; they stay visible unless named in ``defer``.
VISIBLE_SOURCES = frozenset({"desktop_ui", "project", "setup"})

CHARS_PER_TOKEN = 4.0


def search_settings(config: Config | ToolSearchSection | None) -> ToolSearchSection:
    """The ``tools.search`` section of ``config`` (defaults when ``None``)."""
    if config is None:
        return ToolSearchSection()
    if isinstance(config, ToolSearchSection):
        return config
    return config.section(TOOLS).search


def defer_list(settings: ToolSearchSection) -> frozenset[str]:
    # tuple() of a tuple is the tuple itself; a list given directly still hashes.
    return _defer_set(DEFAULT_DEFER if settings.defer is None else tuple(settings.defer))


@functools.lru_cache(maxsize=32)
def _defer_set(names: tuple[str, ...]) -> frozenset[str]:
    # Read on every assembly and every bridge call: the same few tuples, one set each.
    return frozenset(names)


def default_limit(settings: ToolSearchSection) -> int:
    """``search_default_limit`` clamped to ``max_search_limit`` (the loader clamps each alone)."""
    return max(1, min(settings.search_default_limit, settings.max_search_limit))


def function_of(definition: Any) -> Mapping[str, Any] | None:
    """The mapping holding name/description/parameters, or ``None`` when malformed."""
    if isinstance(definition, dict):  # dicts and frozen ones, without the slow ABC check
        fn = definition.get("function")
        if isinstance(fn, dict):
            return fn
    elif not isinstance(definition, Mapping):
        return None
    fn = definition.get("function")
    if isinstance(fn, Mapping):
        return fn
    return definition if "name" in definition else None


def tool_name(definition: Any) -> str | None:
    fn = function_of(definition)
    if fn is None:
        return None
    name = fn.get("name")
    return name if isinstance(name, str) and name else None


def raw_source(definition: Any) -> str:
    """The ``source`` a definition carries at its top level, else ``""``."""
    if type(definition) is not dict and not isinstance(definition, Mapping):
        return ""
    value = definition.get("source")
    return value.strip() if isinstance(value, str) else ""


def is_deferrable(
    name: str, *, source: str = "", defer: frozenset[str] = frozenset(DEFAULT_DEFER)
) -> bool:
    """Bridge names never; names in ``defer`` always; core tools, app-surface sources and the
    host's own tools (no declared source) never; tools of a declared source - a ``source``
    key (MCP server, plugin toolset) or an ``mcp__server__tool`` name - yes."""
    if not name or name in BRIDGE_TOOL_NAMES:
        return False
    if name in defer:
        return True
    if name in CORE_TOOLS:
        return False
    label = source_label(source, name)
    return label != UNKNOWN_SOURCE and label not in VISIBLE_SOURCES


@attrs.frozen(kw_only=True)
class CatalogEntry:
    """One deferred tool as the bridge sees it."""

    name: str
    source: str
    label: str
    description: str
    parameters: Mapping[str, Any]
    definition: Mapping[str, Any] = attrs.field(eq=False, repr=False)

    @property
    def param_names(self) -> tuple[str, ...]:
        props = self.parameters.get("properties") if isinstance(self.parameters, Mapping) else None
        return tuple(props) if isinstance(props, Mapping) else ()

    @property
    def required(self) -> tuple[str, ...]:
        req = self.parameters.get("required") if isinstance(self.parameters, Mapping) else None
        return tuple(str(r) for r in req) if isinstance(req, list) else ()


def entry_of(definition: Mapping[str, Any]) -> CatalogEntry:
    fn = function_of(definition) or {}
    name = str(fn.get("name") or "")
    source = raw_source(definition)
    description = fn.get("description")
    parameters = fn.get("parameters")
    return CatalogEntry(
        name=name,
        source=source,
        label=source_label(source, name),
        description=description if isinstance(description, str) else "",
        parameters=parameters if isinstance(parameters, Mapping) else {},
        definition=definition,
    )


_MEMO_MAX = 4  # splits of settled plain catalogs remembered (``ToolSearchState.plain_splits``)

#: The split a session's assembly made this turn: (the definitions it split, the defer list,
#: the split), as ``ToolSearchState.turns`` keeps it.
TurnSplit = tuple[Any, frozenset[str], Classified]


def remember_turn(session: Any, turn: TurnSplit | None, state: ToolSearchState) -> None:
    """After ``session``'s assembly (``AssemblyResult.turn``): keep its split for the rest of
    the turn; ``None`` forgets the last one.

    Kept by ``id(session)`` in a plain dict (a weak-keyed dict makes a weak reference on
    every lookup); a finalizer drops the entry when the session goes, before its id can be
    reused."""
    key = id(session)
    if turn is None:
        state.turns.pop(key, None)
        return
    if key not in state.watched:
        state.watched.add(key)
        weakref.finalize(session, _forget_session, state.turns, state.watched, key)
    state.turns[key] = turn


def _forget_session(turns: dict[int, Any], watched: set[int], key: int) -> None:
    turns.pop(key, None)
    watched.discard(key)


def turn_split(session: Any, definitions: Any, state: ToolSearchState) -> TurnSplit | None:
    """The split ``session``'s assembly made this turn, when ``definitions`` is the very catalog
    it assembled; else ``None``. Give it to ``classify(..., turn=...)``: the bridge's
    ``tool_search`` then compares the catalog no second time."""
    entry = state.turns.get(id(session)) if session is not None else None
    return entry if entry is not None and entry[0] is definitions else None


def classify(
    definitions: Iterable[Any],
    settings: ToolSearchSection,
    state: ToolSearchState | None = None,
    *,
    turn: TurnSplit | None = None,
) -> Classified:
    """Split the live definitions into visible, deferred and (earlier) bridge definitions.

    A split is a function of each tool's name and source and of the defer list, so it is reused
    when those are proven the same: a frozen catalog by identity, a settled catalog of plain
    dicts by the search fingerprint's check (``bm25.settled_fingerprint``) - and then cut by
    position from the live definitions: a split never holds a definition the caller no longer
    passes. ``turn`` (``turn_split``) is the split this turn's assembly made, taken as it is
    when it was made of these very ``definitions`` under the same defer list.
    What is remembered lives in ``state`` (the host's); without one nothing is.
    """
    defer = defer_list(settings)
    if turn is not None and turn[0] is definitions and turn[1] == defer:
        return turn[2]
    if state is None:
        state = ToolSearchState()
    return _classify(definitions, defer, state)


def _classify(
    definitions: Iterable[Any], defer: frozenset[str], state: ToolSearchState
) -> Classified:
    if definitions.__class__ is list and definitions and definitions[0].__class__ is dict:
        # The usual plain catalog, settled without asking ``as_frozen_tools`` (two frames):
        # a list whose first item is a plain dict is not all frozen.
        return _classify_plain(definitions, defer, state)
    frozen = as_frozen_tools(definitions)
    if frozen is not None:
        return _classify_frozen(frozen, defer, state)
    if isinstance(definitions, (list, tuple)) and definitions:
        return _classify_plain(definitions, defer, state)
    return _build(*_split(list(definitions), defer))


def _classify_frozen(
    frozen: FrozenTools, defer: frozenset[str], state: ToolSearchState
) -> Classified:
    # Frozen definitions cannot change, so the same objects under the same defer list split
    # the same way.
    last = state.last_frozen
    if last is not None and last[1] == defer and (last[0] is frozen or last[0] == frozen):
        return last[2]
    split = _build(*_split(frozen, defer))
    # The parts hold frozen definitions too: the same deferred object next turn lets the
    # search index and the listing recognise it by identity.
    deferred = FrozenTools.of_frozen(split.deferred)
    split = Classified(
        visible=FrozenTools.of_frozen(split.visible),
        deferred=deferred,
        bridge=FrozenTools.of_frozen(split.bridge),
        deferred_names=split.deferred_names,
        deferred_print=deferred,  # a FrozenTools is its own fingerprint (bm25.fingerprint)
    )
    state.last_frozen = (frozen, defer, split)
    return split


def _classify_plain(
    definitions: Sequence[Any], defer: frozenset[str], state: ToolSearchState
) -> Classified:
    print_ = bm25.settled_fingerprint(definitions, state)
    if print_ is None:
        return _build(*_split(definitions, defer))
    memo = state.plain_splits
    for known in memo:
        if known.print_ is print_ and known.defer == defer:
            # Cut from the live list by position (proven to hold the same names and sources
            # there): the split holds exactly the objects the caller passes this turn, with
            # no identity check of every definition against the last turn's.
            return _build_known(definitions, known)
    _, visible, deferred, bridge, names = _split(definitions, defer)
    known = _Positions(
        print_, defer, visible, deferred, bridge, names,
        bm25.subset_fingerprint(print_, deferred),
        (_runs(visible), _runs(deferred), _runs(bridge)),
    )
    state.plain_splits = (known, *memo[: _MEMO_MAX - 1])
    return _build(definitions, visible, deferred, bridge, names, known.deferred_print)


#: More runs than this and a part is picked tool by tool (a Python loop over the runs would
#: cost more than one C-level ``map`` over the positions).
_RUNS_MAX = 16


def _runs(positions: tuple[int, ...]) -> tuple[slice, ...] | None:
    """``positions`` (ascending) as slices of consecutive positions; ``None`` past
    ``_RUNS_MAX`` of them."""
    runs: list[slice] = []
    start = previous = None
    for position in positions:
        if previous is not None and position == previous + 1:
            previous = position
            continue
        if start is not None:
            runs.append(slice(start, previous + 1))  # type: ignore[operator]
            if len(runs) > _RUNS_MAX:
                return None
        start = previous = position
    if start is not None:
        runs.append(slice(start, previous + 1))  # type: ignore[operator]
    return tuple(runs) if len(runs) <= _RUNS_MAX else None


def _take(definitions: Sequence[Any], positions: tuple[int, ...], runs: tuple[slice, ...] | None) -> tuple[Any, ...]:
    if runs is None:
        return tuple(map(definitions.__getitem__, positions))
    if len(runs) == 1:
        run = runs[0]
        if run.start == 0 and run.stop == len(definitions):
            return tuple(definitions)  # the whole list (every tool deferred): one pass, no slice
        return tuple(definitions[run])
    out: list[Any] = []
    for run in runs:
        out += definitions[run]
    return tuple(out)


def _build_known(definitions: Sequence[Any], known: _Positions) -> Classified:
    visible, deferred, bridge = known.runs
    return Classified(
        visible=_take(definitions, known.visible, visible),
        deferred=_take(definitions, known.deferred, deferred),
        bridge=_take(definitions, known.bridge, bridge),
        deferred_names=known.names,
        deferred_print=known.deferred_print,
    )


def _split(
    definitions: Sequence[Any], defer: frozenset[str]
) -> tuple[Sequence[Any], tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[str, ...]]:
    visible: list[int] = []
    deferred: list[int] = []
    names: list[str] = []
    bridge: list[int] = []
    for position, definition in enumerate(definitions):
        name = tool_name(definition)
        if name in BRIDGE_TOOL_NAMES:
            bridge.append(position)
        elif name and is_deferrable(name, source=raw_source(definition), defer=defer):
            deferred.append(position)
            names.append(name)
        else:
            visible.append(position)
    return definitions, tuple(visible), tuple(deferred), tuple(bridge), tuple(names)


def _build(
    definitions: Sequence[Any],
    visible: tuple[int, ...],
    deferred: tuple[int, ...],
    bridge: tuple[int, ...],
    names: tuple[str, ...],
    deferred_print: tuple[Any, ...] | None = None,
) -> Classified:
    pick = definitions.__getitem__
    return Classified(
        visible=tuple(map(pick, visible)),
        deferred=tuple(map(pick, deferred)),
        bridge=tuple(map(pick, bridge)),
        deferred_names=names,
        deferred_print=deferred_print,
    )


def estimate_schema_tokens(definitions: Sequence[Any]) -> int:
    """ceil(sum of compact-JSON lengths / 4), the reference's rough cost of sending schemas."""
    if not definitions:
        return 0
    text = json.dumps(list(definitions), separators=(",", ":"), default=str)
    # One dump of the list is the sum of the per-definition dumps plus brackets and commas.
    chars = len(text) - 2 - (len(definitions) - 1)
    return math.ceil(chars / CHARS_PER_TOKEN)


def listing_budget(settings: ToolSearchSection, context_length: int | None) -> int:
    """Tokens the listing may use: min(listing_max_tokens, window x threshold_pct / 100)."""
    if context_length is None or context_length <= 0:
        share = 10_000
    else:
        share = int(context_length * settings.threshold_pct / 100.0)
    return max(0, min(settings.listing_max_tokens, share))

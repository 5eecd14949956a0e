"""The three bridge tools: their schemas and their dispatch (spec §16).

``handle_bridge_call`` is the public entry point an agent loop calls when the model calls
``tool_search``, ``tool_describe`` or ``tool_call``. It works on the live tool definitions it is
given (never a catalog kept from an earlier turn) and answers a string for the model: JSON for
searches, descriptions and errors; for a successful ``tool_call``, the real tool's result after
the same result processing a direct call gets (``host.tool_result_process``).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import orjson

from hermes_core.plugin import Config, FrozenTools, ToolCallContext, bounded, get_logger, host_state
from hermes_plugins.tools import bm25
from hermes_plugins.tools.catalog import (
    BRIDGE_TOOL_NAMES,
    TOOL_CALL,
    TOOL_DESCRIBE,
    TOOL_SEARCH,
    CatalogEntry,
    TurnSplit,
    classify,
    default_limit,
    entry_of,
    function_of,
    search_settings,
    tool_name,
)
from hermes_plugins.tools.schema_check import SchemaValidators, check
from hermes_plugins.tools.settings import ToolSearchSection
from hermes_plugins.tools.sources import source_label
from hermes_plugins.tools.state import Classified, ToolSearchState, state_of

log = get_logger(__name__)
#: The level check alone (cached by logging), so a per-call event is not built for nobody.
_debug = log.isEnabledFor

MAX_QUERIES = 7
MAX_DESCRIBE = 10
DESCRIPTION_CHARS = 500
MAX_REQUIRED_SHOWN = 32

Invoke = Callable[[str, dict[str, Any]], Any]


# --- schemas ------------------------------------------------------------------------------


def bridge_definitions(
    *, deferred_count: int, listing: str | None, listing_form: str
) -> list[dict[str, Any]]:
    """The three bridge tool definitions. Every byte here is paid on every turn: keep it lean."""
    search_desc = _search_description(deferred_count, listing, listing_form)
    return [
        {
            "type": "function",
            "function": {
                "name": TOOL_SEARCH,
                "description": search_desc,
                "parameters": {
                    "type": "object",
                    "properties": {
                        "queries": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": f"1-{MAX_QUERIES} keyword queries, searched separately.",
                        },
                        "limit": {"type": "integer", "description": "Results per query."},
                    },
                    "required": ["queries"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": TOOL_DESCRIBE,
                "description": (
                    f"Full parameter schemas of deferred tools, by exact name (at most {MAX_DESCRIBE})."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {"names": {"type": "array", "items": {"type": "string"}}},
                    "required": ["names"],
                },
            },
        },
        {
            "type": "function",
            "function": {
                "name": TOOL_CALL,
                "description": (
                    "Run one deferred tool. Arguments must match the schema from "
                    f"{TOOL_DESCRIBE}; they are checked before the tool runs."
                ),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "calls": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "arguments": {"type": "object"},
                                },
                                "required": ["name"],
                            },
                        }
                    },
                    "required": ["calls"],
                },
            },
        },
    ]


@functools.lru_cache(maxsize=16)
def _search_description(deferred_count: int, listing: str | None, listing_form: str) -> str:
    # Memoised: the listing (kilobytes at 1,000+ tools) is the same object turn after turn
    # (assembly memoises it), so the key hashes and compares in O(1) and the concatenation
    # is not redone.
    search_desc = (
        f"Search {deferred_count} more tools that are available but not shown in full. Each "
        "query is a few keywords (purpose, service, parameter names); results give tool names "
        f"and short descriptions. Then get parameters with {TOOL_DESCRIBE} and run a tool "
        f"with {TOOL_CALL}."
    )
    if listing:
        search_desc += (
            "\n\nA tool named below exists: never say it is unavailable, and when you already "
            f"know the exact name skip the search and go to {TOOL_DESCRIBE}."
        )
        if listing_form in {"mixed", "groups"}:
            search_desc += " Sources shown only as a count must be searched first."
        search_desc += "\n\n" + listing
    return search_desc


# --- dispatch -----------------------------------------------------------------------------


class _Catalog:
    """The live definitions as split once per bridge call; entries are built only when asked."""

    def __init__(self, split: Classified) -> None:
        self.deferred = split.deferred
        self.deferred_print = split.deferred_print
        self._visible = split.visible
        self._defs: dict[str, Mapping[str, Any]] | None = None

    def _by_name(self) -> dict[str, Mapping[str, Any]]:
        if self._defs is None:
            defs: dict[str, Mapping[str, Any]] = {}
            for definition in self.deferred:
                defs.setdefault(tool_name(definition) or "", definition)
            self._defs = defs
        return self._defs

    def entry(self, name: str) -> CatalogEntry | None:
        definition = self._by_name().get(name)
        return entry_of(definition) if definition is not None else None

    def count(self) -> int:
        return len(self.deferred)

    def is_visible(self, name: str) -> bool:
        return any(tool_name(d) == name for d in self._visible)

    def sources(self) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for definition in self._by_name().values():
            label = entry_of(definition).label
            counts[label] = counts.get(label, 0) + 1
        return [{"name": label, "tool_count": counts[label]} for label in sorted(counts)]


def _error(message: str, **extra: Any) -> str:
    return json.dumps({"error": message, **extra}, ensure_ascii=False)


def _parse_arguments(arguments: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Blank or missing -> {}; a JSON string is decoded; anything but an object is an error."""
    if arguments is None:
        return {}, None
    if isinstance(arguments, str):
        if not arguments.strip():
            return {}, None
        try:
            arguments = bounded.loads(arguments)  # a model's text: depth-checked before parsing
        except bounded.TooDeepError:
            return None, f"the arguments are nested more than {bounded.MAX_DEPTH} levels deep"
        except json.JSONDecodeError as exc:
            return None, f"the arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    elif bounded.value_depth(arguments) > bounded.MAX_DEPTH:
        return None, f"the arguments are nested more than {bounded.MAX_DEPTH} levels deep"
    if arguments.__class__ is dict:
        return arguments, None  # read, never edited: no copy
    if not isinstance(arguments, Mapping):
        return None, f"the arguments must be a JSON object, not {type(arguments).__name__}"
    return dict(arguments), None


def handle_bridge_call(
    name: str,
    arguments: Any,
    *,
    tools: Sequence[Any],
    config: Config | ToolSearchSection | None,
    invoke: Invoke,
    host: Any = None,
    ctx: ToolCallContext | None = None,
) -> Any:
    """Answer one call of a bridge tool.

    Args:
        name: ``tool_search``, ``tool_describe`` or ``tool_call``.
        arguments: the call's arguments (a mapping or its JSON text).
        tools: the live tool definitions of the session (all of them, not the assembled list).
        config: the configuration (or its ``tools.search`` section); ``None`` = defaults.
        invoke: ``invoke(tool_name, arguments)`` runs a real tool and returns its result.
        host: the ``PluginHost``; a real call's result goes through its
            ``tool_result_process`` like a direct call's. Without a host the built-in pipeline
            runs.
        ctx: the bridge call's ``ToolCallContext`` (call id, window, home, environment).

    Returns:
        A JSON string for the model, or the processed result of the real tool.
    """
    return answer_bridge_call(
        name, arguments, tools=tools, settings=search_settings(config),
        state=state_of(host),  # without a host nothing is remembered
        invoke=invoke, host=host, ctx=ctx, config=config,
    )


def answer_bridge_call(
    name: str,
    arguments: Any,
    *,
    tools: Sequence[Any],
    settings: ToolSearchSection,
    state: ToolSearchState,
    invoke: Invoke | None,
    host: Any,
    ctx: ToolCallContext | None,
    config: Config | ToolSearchSection | None,
    turn: TurnSplit | None = None,
) -> Any:
    """``handle_bridge_call`` with the settings and the host's state already looked up (the
    hook's path: it has them). ``invoke`` may be ``None`` for ``tool_search`` and
    ``tool_describe``, which run nothing. ``turn`` (``catalog.turn_split``): the split the
    session's assembly made this turn, reused when it was made of these very ``tools``."""
    args, problem = _parse_arguments(arguments)
    if args is None:
        return _error(f"{name}: {problem}")
    if name not in BRIDGE_TOOL_NAMES:
        return _error(
            f"{name!r} is not a bridge tool (expected one of {', '.join(sorted(BRIDGE_TOOL_NAMES))})"
        )
    split = classify(tools, settings, state, turn=turn)  # once per call, shared below
    if name == TOOL_SEARCH:
        return _search(args, split, settings, state)
    if name == TOOL_DESCRIBE:
        return _describe(args, split)
    if invoke is None:
        raise TypeError("tool_call needs an invoke function")
    return _call(args, split, invoke, host, ctx, config)


def _string_list(value: Any) -> list[str] | None:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return None
    out: list[str] = []
    for item in value:
        if not isinstance(item, str):
            return None
        item = item.strip()
        if item:
            out.append(item)
    return out


def _search(
    args: Mapping[str, Any], split: Classified, settings: ToolSearchSection, state: ToolSearchState
) -> str:
    queries = _string_list(args.get("queries", args.get("query")))
    if queries is None:
        return _error(f"{TOOL_SEARCH}: 'queries' must be a list of keyword strings")
    if not queries:
        return _error(f"{TOOL_SEARCH}: give at least one non-blank query in 'queries'")
    if len(queries) > MAX_QUERIES:
        return _error(
            f"{TOOL_SEARCH}: too many queries ({len(queries)}); send at most {MAX_QUERIES} at once"
        )
    limit = args.get("limit")
    if isinstance(limit, str) and limit.strip().isdigit():
        limit = int(limit)
    if not isinstance(limit, int) or isinstance(limit, bool):
        limit = default_limit(settings)
    limit = max(1, min(limit, settings.max_search_limit))
    deferred = split.deferred
    index = bm25.index_for(deferred, split.deferred_print, state)
    # Frozen definitions cannot change, so a hit's whole summary (``required`` included) is
    # a function of the index's key and is kept with it.
    frozen = deferred.__class__ is FrozenTools
    derived = index.derived
    results: list[dict[str, Any]] = []
    shown: dict[str, dict[str, Any]] = {}
    for query in queries:
        hits = index.search(query, limit)
        matches = []
        for hit in hits:
            name = hit.name
            matches.append(name)
            if name not in shown:
                position = hit.position
                if frozen:
                    summary = derived.get((_SUMMARY, position))
                    if summary is None:
                        summary = derived[(_SUMMARY, position)] = _hit_summary(
                            index, deferred, position
                        )
                else:
                    static = derived.get(position)
                    if static is None:
                        summary = _hit_summary(index, deferred, position)
                    else:  # the usual hit: one call per hit, for the part read live
                        summary = {
                            "source": static[0], "source_name": static[1],
                            "description": static[2], "required": _required(deferred[position]),
                        }
                shown[name] = summary
        group: dict[str, Any] = {"query": query, "matches": matches}
        if not hits:
            group["available_sources"] = _Catalog(split).sources()
            group["hint"] = (
                "nothing matched; try other keywords (a service name, a verb, a parameter "
                "name) or search one of the sources listed"
            )
        results.append(group)
    if _debug(logging.DEBUG):  # per call: skip building the event when nobody listens
        log.debug("tool_search_answered", queries=len(queries), matches=len(shown))
    return _dumps(
        {
            "queries": queries,
            "total_available": len(deferred),
            "results": results,
            "tools": shown,
        }
    )


#: Marks a whole-summary entry in ``SearchIndex.derived`` (position entries hold its parts).
_SUMMARY = object()


def _dumps(payload: dict[str, Any]) -> str:
    """Compact JSON (orjson: a tenth of ``json.dumps``' time, and fewer tokens for the model);
    ``json`` for what orjson refuses (a lone surrogate in a description, say)."""
    try:
        return orjson.dumps(payload).decode("utf-8")
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def _hit_summary(index: bm25.SearchIndex, deferred: Sequence[Any], position: int) -> dict[str, Any]:
    """``_summary`` of the deferred tool at ``position``. Its source, label and description are
    indexed fields, memoised with the index; ``required`` is not, so it is read live."""
    static = index.derived.get(position)
    if static is None:
        key = index.key(position)
        name, source, description = key[:3] if key is not None else ("", "", "")
        label = source_label(source, name)
        static = index.derived[position] = (label, source or label, _clip(description))
    label, source_name, description = static
    return {
        "source": label,
        "source_name": source_name,
        "description": description,
        "required": _required(deferred[position]),
    }


def _required(definition: Any) -> list[str]:
    # Read live on every hit of a plain catalog: the OpenAI shape is read without the
    # ``function_of`` call, and the names are converted by a C-level map, not a comprehension.
    fn = definition.get("function") if definition.__class__ is dict else None
    if fn.__class__ is not dict:
        fn = function_of(definition)
    params = fn.get("parameters") if fn is not None else None
    required = params.get("required") if isinstance(params, (dict, Mapping)) else None
    if not isinstance(required, list):
        return []
    return list(map(str, required[:MAX_REQUIRED_SHOWN]))


def _clip(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def _describe(args: Mapping[str, Any], split: Classified) -> str:
    names = _string_list(args.get("names", args.get("name")))
    if not names:
        return _error(f"{TOOL_DESCRIBE}: 'names' must list one or more exact tool names")
    names = list(dict.fromkeys(names))
    if len(names) > MAX_DESCRIBE:
        return _error(
            f"{TOOL_DESCRIBE}: too many names ({len(names)}); ask for at most {MAX_DESCRIBE} at once"
        )
    catalog = _Catalog(split)
    described: dict[str, Any] = {}
    not_found: list[str] = []
    errors: dict[str, str] = {}
    for tool in names:
        entry = catalog.entry(tool)
        if entry is not None:
            described[tool] = {"description": entry.description, "parameters": dict(entry.parameters)}
        elif tool in BRIDGE_TOOL_NAMES:
            errors[tool] = "this is a bridge tool; its schema is already in your tool list"
        elif catalog.is_visible(tool):
            errors[tool] = "this tool is listed directly; its schema is already in your tool list"
        else:
            not_found.append(tool)
    payload: dict[str, Any] = {"tools": described}
    if not_found:
        payload["not_found"] = not_found
        payload["hint"] = f"use {TOOL_SEARCH} to find the exact names"
    if errors:
        payload["errors"] = errors
    return json.dumps(payload, ensure_ascii=False)


def _call(
    args: Mapping[str, Any],
    split: Classified,
    invoke: Invoke,
    host: Any,
    ctx: ToolCallContext | None,
    config: Config | ToolSearchSection | None,
) -> Any:
    calls = args.get("calls")
    if calls is None and "name" in args:  # tolerate the flat form {name, arguments}
        calls = [{"name": args.get("name"), "arguments": args.get("arguments")}]
    if isinstance(calls, Mapping):
        calls = [calls]
    if not isinstance(calls, list) or not calls:
        return _error(f"{TOOL_CALL}: 'calls' must be a list with one {{name, arguments}} entry")
    if len(calls) > 1:
        return _error(
            f"{TOOL_CALL}: run one tool per call ({len(calls)} were given); nothing was invoked"
        )
    call = calls[0]
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        return _error(f"{TOOL_CALL}: each call needs a 'name' string and an 'arguments' object")
    target = call["name"].strip()
    if target in BRIDGE_TOOL_NAMES:
        return _error(
            f"{TOOL_CALL}: {target!r} is a bridge tool; call it directly, not through {TOOL_CALL}"
        )
    catalog = _Catalog(split)
    entry = catalog.entry(target)
    if entry is None:
        if catalog.is_visible(target):
            return _error(
                f"{TOOL_CALL}: {target!r} is a directly-listed tool; call it directly instead"
            )
        return _error(
            f"{TOOL_CALL}: no deferred tool is named {target!r}; find the exact name with {TOOL_SEARCH}"
        )
    call_args, problem = _parse_arguments(call.get("arguments"))
    if call_args is None:
        return _error(f"{TOOL_CALL}: {target}: {problem}; the tool was NOT invoked")
    coerced, problems = check(call_args, entry.parameters, validators=host_state(host, SchemaValidators))
    if problems:
        return _error(
            f"{TOOL_CALL}: the arguments for {target!r} do not match its schema; the tool was "
            "NOT invoked. Fix them and call again.",
            problems=problems,
            schema=dict(entry.parameters),
        )
    try:
        result = invoke(target, coerced)
    except Exception as exc:  # noqa: BLE001 - the model gets the failure, the turn goes on
        log.warning("tool_call_failed", tool=target, error=f"{type(exc).__name__}: {exc}")
        return _error(f"{TOOL_CALL}: {target!r} failed: {type(exc).__name__}: {exc}")
    real_ctx = _real_context(ctx, target, coerced, config, host)
    if host is not None:
        return host.tool_result_process(result, real_ctx)
    from hermes_plugins.tools.spill import process_tool_result

    return process_tool_result(result, real_ctx)


def _real_context(
    ctx: ToolCallContext | None,
    target: str,
    arguments: dict[str, Any],
    config: Config | ToolSearchSection | None,
    host: Any,
) -> ToolCallContext:
    full_config = config if isinstance(config, Config) else None
    if ctx is None:
        return ToolCallContext(tool_name=target, arguments=arguments, config=full_config, host=host)
    return attrs.evolve(
        ctx,
        tool_name=target,
        arguments=arguments,
        config=ctx.config if ctx.config is not None else full_config,
        host=ctx.host if ctx.host is not None else host,
    )

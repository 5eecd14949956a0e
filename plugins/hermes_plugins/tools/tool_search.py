"""Built-in plugin ``tool_search``: deferred tool disclosure (spec §16).

With tools beyond the core set (MCP servers, plugins), the model sees the core tools plus the
three bridge tools ``tool_search`` / ``tool_describe`` / ``tool_call`` instead of every schema;
``tool_search``'s description lists the deferred tools as far as the listing budget allows.
The host answers bridge calls with ``Session.handle_tool_call`` (this plugin's
``hermes_tool_call``), over the catalog the session last assembled and the host's ``invoke``.

Modules: ``catalog`` (what is deferred), ``bm25`` (search), ``sources`` (a tool's source label,
read by both), ``listing`` (the listing and its degradation), ``bridge`` (schemas and dispatch),
``schema_check`` (argument checking), ``assembly`` (the assembly itself), ``cli``
(``hermes-ctx tools ...``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any, TypeGuard

from hermes_core.plugin import (
    ConfigSection,
    ToolCallContext,
    ToolsContext,
    get_logger,
    hookimpl,
    record_warning,
)
from hermes_plugins.tools.assembly import assemble_tool_defs
from hermes_plugins.tools.bridge import answer_bridge_call
from hermes_plugins.tools.catalog import (
    BRIDGE_TOOL_NAMES,
    TOOL_CALL,
    remember_turn,
    search_settings,
    turn_split,
)
from hermes_plugins.tools.settings import TOOLS, ToolsSection
from hermes_plugins.tools.state import state_of

log = get_logger(__name__)
#: The level check alone (cached by logging), so a per-call event is not built for nobody.
_debug = log.isEnabledFor


@hookimpl
def hermes_config_sections() -> ConfigSection[ToolsSection]:
    return TOOLS


@hookimpl(trylast=True)
def hermes_tools_assemble(tools: Sequence[dict[str, Any]], ctx: ToolsContext) -> list[dict[str, Any]]:
    state = state_of(ctx.host)  # once per turn: everything below shares it
    result = assemble_tool_defs(
        tools, context_length=ctx.context_length, config=ctx.config, state=state
    )
    if ctx.session is not None:
        remember_turn(ctx.session, result.turn, state)  # the turn's tool_search reuses it
    if _debug(logging.DEBUG):  # per turn: skip building the event when nobody listens
        log.debug(
            "tools_assembled",
            activated=result.activated,
            visible=len(result.tool_defs),
            deferred=result.deferred_count,
            listing_form=result.listing_form,
            session=ctx.session_id or None,
        )
    out = list(result.tool_defs)
    if _all_dicts(out):
        return out
    return [d if isinstance(d, dict) else dict(d) for d in out]


def _all_dicts(definitions: list[Mapping[str, Any]]) -> TypeGuard[list[dict[str, Any]]]:
    """Every definition a plain dict: one C-level pass, so the common case costs no copy."""
    return all(map(isinstance, definitions, repeat(dict)))


def _no_invoke(ctx: ToolCallContext) -> Any:
    def invoke(name: str, arguments: dict[str, Any]) -> Any:
        record_warning(
            "tool_call_without_invoke",
            f"the model called {name!r} through {TOOL_CALL}, but the host gave no invoke "
            "function (Session.open(invoke=...) or handle_tool_call(..., invoke=...)); the tool "
            "was not run",
            plugin="tool_search", tool=name, session_id=ctx.session_id or None,
        )
        raise RuntimeError("the host cannot run this tool through the bridge")

    return invoke


@hookimpl(trylast=True)
def hermes_tool_call(name: str, arguments: Mapping[str, Any], ctx: ToolCallContext) -> Any:
    if name not in BRIDGE_TOOL_NAMES:
        return None
    session = ctx.session
    catalog = session.tool_catalog if session is not None else ()
    if not catalog:
        log.warning("bridge_called_without_catalog", tool=name, session=ctx.session_id or None)
        return json.dumps({"error": (
            f"{name}: no tool catalog is known yet (the host never called assemble_tools)"
        )})
    invoke = ctx.invoke
    if name == TOOL_CALL and not callable(invoke):
        invoke = _no_invoke(ctx)  # only tool_call runs a tool
    state = state_of(ctx.host)
    return answer_bridge_call(
        name, arguments, tools=catalog, settings=search_settings(ctx.config), state=state,
        invoke=invoke, host=ctx.host, ctx=ctx, config=ctx.config,
        turn=turn_split(session, catalog, state),  # this turn's split, when of this catalog
    )


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.tools.cli import tools_group

    if "tools" not in cli.commands:
        cli.add_command(tools_group)

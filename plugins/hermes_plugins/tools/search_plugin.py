"""Built-in plugin ``tool_search``: deferred tool disclosure (spec §16).

With tools beyond the core set (MCP servers, plugins), the model sees the core tools plus the
three bridge tools ``tool_search`` / ``tool_describe`` / ``tool_call`` instead of every schema;
``tool_search``'s description lists the deferred tools as far as the listing budget allows.
The agent loop answers bridge calls with ``hermes_plugins.tools.bridge.handle_bridge_call``.

Modules: ``catalog`` (what is deferred), ``bm25`` (search), ``listing`` (the listing and its
degradation), ``bridge`` (schemas and dispatch), ``schema_check`` (argument checking),
``assembly`` (the assembly itself), ``cli`` (``hermes-ctx tools ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_core import hookimpl
from hermes_core.logging import get_logger
from hermes_core.records import ToolsContext
from hermes_plugins.tools.assembly import assemble_tool_defs

log = get_logger(__name__)


@hookimpl(trylast=True)
def hermes_tools_assemble(tools: Sequence[dict[str, Any]], ctx: ToolsContext) -> list[dict[str, Any]]:
    result = assemble_tool_defs(tools, context_length=ctx.context_length, config=ctx.config)
    log.debug(
        "tools_assembled",
        activated=result.activated,
        visible=len(result.tool_defs),
        deferred=result.deferred_count,
        listing_form=result.listing_form,
        session=ctx.session_id or None,
    )
    return [dict(d) if not isinstance(d, dict) else d for d in result.tool_defs]


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.tools.cli import tools_group

    if "tools" not in cli.commands:
        cli.add_command(tools_group)

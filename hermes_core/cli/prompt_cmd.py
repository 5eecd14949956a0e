"""``hermes-ctx prompt``: the system prompt a session would send, and where every block came from.

Prints the prompt itself (data on stdout, warnings on stderr), or with ``--json`` the whole
breakdown: layers, blocks with their plugin and exact token count, context files and warnings.
The command only inspects: it never writes to the session store.
"""

from __future__ import annotations

from typing import Any

import click

from hermes_core.cli.app import CliState, cli, emit_json, guarded
from hermes_core.diagnostics import HostWarning


def _warning_json(warning: HostWarning) -> dict[str, Any]:
    return {
        "kind": warning.kind,
        "message": warning.message,
        "plugin": warning.plugin,
        "path": warning.path,
    }


def _tools(value: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (value or "").split(",") if part.strip())


@cli.command()
@click.option("--cwd", type=click.Path(exists=True, file_okay=False), help="Working directory (default: the current one).")
@click.option("--model", default="", help="Model name (drives model-family guidance).")
@click.option("--provider", default="", help="Provider name.")
@click.option("--platform", default="", help="Platform: cli, telegram, discord, cron ...")
@click.option("--tools", default="", metavar="A,B", help="Comma-separated tool names the session has.")
@click.option("--context-length", type=click.IntRange(min=1), default=None, help="Context window in tokens.")
@click.option("--session-id", default=None, help="Show the stored prompt of this session (if it is still valid).")
@click.option("--system-message", default=None, help="The caller's system message (context layer).")
@click.option(
    "--json", "as_json", is_flag=True,
    help="JSON: {prompt, layers, blocks, tokens, warnings, context_files, session_id, origin}.",
)
@click.pass_obj
@guarded
def prompt(
    state: CliState,
    cwd: str | None,
    model: str,
    provider: str,
    platform: str,
    tools: str,
    context_length: int | None,
    session_id: str | None,
    system_message: str | None,
    as_json: bool,
) -> None:
    """Print the assembled system prompt (stable, context and volatile layers)."""
    from hermes_core.session import Session

    config = state.config
    host = state.host
    session = Session.open(
        cwd=cwd,
        home=state.home_path,
        model=model,
        provider=provider,
        platform=platform,
        tools=_tools(tools),
        session_id=session_id,
        system_message=system_message,
        context_length=context_length,
        config=config,
        host=host,
        persist=False,
    )
    try:
        text = session.system_prompt
        built = session.built
        session_warnings = session.warnings
        warnings = [*state.warnings, *session_warnings]
    finally:
        session.close()
    state.warnings.extend(session_warnings)  # printed once on stderr by the group
    if not as_json:
        click.echo(text)
        return
    assert built is not None
    emit_json({
        "prompt": text,
        "layers": dict(built.layers),
        "blocks": [
            {"name": b.name, "layer": b.layer, "plugin": b.plugin, "chars": b.chars, "tokens": b.tokens}
            for b in built.blocks
        ],
        "tokens": {"exact": built.exact_tokens, "estimated": built.estimated_tokens},
        "warnings": [_warning_json(w) for w in warnings],
        "context_files": [dict(entry) for entry in built.context_files],
        "session_id": session.session_id,
        "origin": built.origin,
    })

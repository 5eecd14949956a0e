"""``hermes-ctx``: inspect hooks, plugins, engines, configuration and what they produce.

Data goes to stdout (a table, or JSON with ``--json``), logs to stderr. Bad configuration exits
with code 2 and a one-line error, never a traceback. Plugins add subcommands through
``hermes_cli_register_commands``; those are resolved with the same host (so ``--disable`` and
``--home`` apply to them too). The group and helpers live in ``app``; each subcommand module
registers itself on import.
"""

from __future__ import annotations

from hermes_core.cli import compress_cmd, listing, prompt_cmd, transcripts_cmd
from hermes_core.cli.app import (
    CliState,
    PluginAwareGroup,
    cli,
    emit_json,
    emit_table,
    fail,
    guarded,
    main,
)

__all__ = [
    "CliState",
    "PluginAwareGroup",
    "cli",
    "compress_cmd",
    "emit_json",
    "emit_table",
    "fail",
    "guarded",
    "listing",
    "main",
    "prompt_cmd",
    "transcripts_cmd",
]

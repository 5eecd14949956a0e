"""``hermes-ctx``: inspect hooks, plugins, engines, configuration and what they produce.

The group and its helpers live in ``app`` (output rules there); each subcommand module
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

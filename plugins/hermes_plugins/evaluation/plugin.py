"""Registers ``hermes-ctx eval`` (see ``evaluation.command``)."""

from __future__ import annotations

from typing import Any

from hermes_core.plugin import hookimpl


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.evaluation.command import eval_command

    cli.add_command(eval_command)

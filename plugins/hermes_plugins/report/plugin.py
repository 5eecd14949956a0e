"""Registers ``hermes-ctx report`` (see ``report.command``)."""

from __future__ import annotations

from typing import Any

from hermes_core import hookimpl


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.report.command import report_command

    cli.add_command(report_command)

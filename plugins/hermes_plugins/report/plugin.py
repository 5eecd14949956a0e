"""The report plugin: ``hermes-ctx report`` and the ``--html`` page of compress, eval, cache-report."""

from __future__ import annotations

from typing import Any

from hermes_core.plugin import hookimpl


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: Any) -> None:
    from hermes_plugins.report.command import report_command

    cli.add_command(report_command)


@hookimpl(trylast=True)
def hermes_report_html(request: Any) -> str | None:
    """The page of ``compress``, ``eval`` and ``cache-report`` (``None`` for another command)."""
    from hermes_plugins.report import pages
    from hermes_plugins.report.html import render_html

    if request.command == "compress":
        data = pages.compress_page(request.source, list(request.before), list(request.after),
                                   request.report, request.engine)
    elif request.command == "eval":
        data = pages.eval_page([request.source], request.report)
    elif request.command == "cache-report":
        data = pages.cache_page(request.source, request.report)
    else:
        return None
    return render_html(data)

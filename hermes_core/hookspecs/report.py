"""Hooks for reports: the HTML page a command writes with ``--html FILE``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_core.hookspecs.markers import hookspec

if TYPE_CHECKING:
    from hermes_core.reports import ReportRequest


class ReportSpecs:
    @hookspec(firstresult=True)
    def hermes_report_html(self, request: ReportRequest) -> str | None:
        """Render a command's report as one self-contained HTML page.

        Called: once per ``--html FILE`` of ``hermes-ctx compress``, ``eval`` or
            ``cache-report``, after the command's report is complete.

        Args:
            request: a ``ReportRequest``: ``command`` (``compress``, ``eval``,
                ``cache-report``), ``source`` (the input file(s)), ``report`` (the command's
                ``--json`` report of the same run), and for ``compress`` the messages before
                and after and the engine.

        Returns:
            The whole page (an HTML document that loads nothing from the network), or
            ``None`` when this plugin does not render that command's report.

        Semantics: firstresult; the first page returned is written. With none (the report
            plugin blocked) the command exits 2 with one line.

        Example::

            @hookimpl
            def hermes_report_html(request):
                if request.command == "compress":
                    return "<!DOCTYPE html>..."

        .. versionadded:: 0.1
        """

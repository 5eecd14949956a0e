"""``--html FILE`` of the commands that report: the page comes from ``hermes_report_html``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from hermes_core.cli.app import fail
from hermes_core.reports import ReportRequest


def html_option(fn: Any) -> Any:
    """``--html FILE`` (parameter ``html_out``)."""
    return click.option(
        "--html", "html_out", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="Also write the report as one self-contained HTML page that opens offline.",
    )(fn)


def write_report_html(host: Any, path: Path, *, command: str, source: str, report: Mapping[str, Any],
                      before: Sequence[Mapping[str, Any]] = (), after: Sequence[Mapping[str, Any]] = (),
                      engine: Any = None) -> None:
    """Render the page of ``report`` through the hook and write it to ``path``; exits 2 with
    one line when no plugin renders it or the file cannot be written."""
    request = ReportRequest(command=command, source=source, report=report, before=before, after=after,
                            engine=engine)
    page = host.report_html(request)
    if page is None:
        fail(f"{path}: no plugin renders an HTML report of {command} (is the report plugin blocked?)")
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        fail(f"{path}: cannot write the HTML report: {exc}")

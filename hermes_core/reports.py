"""The record a command hands to the HTML report hook (``hermes_report_html``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class ReportRequest:
    """What a command ran and found, for rendering its ``--html`` page.

    ``report`` is the command's ``--json`` report of the same run (the page shows its figures);
    ``before`` / ``after`` are the messages a compression read and returned (``compress``; empty
    otherwise) and ``engine`` the engine object that ran (its window and threshold).
    """

    command: str
    source: str
    report: Mapping[str, Any]
    before: Sequence[Mapping[str, Any]] = ()
    after: Sequence[Mapping[str, Any]] = ()
    engine: Any = None

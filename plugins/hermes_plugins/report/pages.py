"""The report dict of each command (what ``--html`` renders), and writing the file.

Each page holds the command's ``--json`` report unchanged under its own key (``compress``,
``eval``, ``cache``), so the page shows the figures of the same run; ``compress`` adds the
timeline of the transcript and the detail of its compaction. Every string of a page goes
through ``hermes_core.redaction`` (a report file is shared; summaries and spans quote the
transcript).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import estimate_message_tokens
from hermes_plugins.report.data import compaction_detail, timeline


def _redacted(page: Mapping[str, Any]) -> dict[str, Any]:
    """``page`` with every string value redacted (its keys are ours)."""
    from hermes_plugins.evaluation.command import redacted

    return {key: redacted(value) for key, value in page.items()}


def cumulative_context(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The context size after each request when nothing is compacted (``request_ends``)."""
    from hermes_plugins.replay_requests import request_ends

    ends = request_ends(messages)
    if not ends or ends[-1] != len(messages):
        ends.append(len(messages))
    points = []
    total = 0
    start = 0
    for end in ends:
        if end <= start:
            continue
        total += sum(estimate_message_tokens(m) for m in messages[start:end])
        start = end
        points.append({"message": end - 1, "tokens": total})
    return points


def compress_page(source: str, before: list[dict[str, Any]], after: list[dict[str, Any]],
                  report: Mapping[str, Any], engine: Any) -> dict[str, Any]:
    """``compress --html``: the transcript's timeline (compacted once, at its end), what the
    compaction did, and the ``--json`` report."""
    window = int(getattr(engine, "context_length", 0) or 0) or None
    threshold = int(getattr(engine, "threshold_tokens", 0) or 0) or None
    points = cumulative_context(before)
    compactions: list[dict[str, Any]] = []
    if after is not before and before:
        detail = compaction_detail(before, after, report, message=len(before) - 1)
        compactions.append(detail)
        points.append({"message": len(before) - 1, "tokens": detail["after"]["tokens"]})
    return _redacted({
        "command": "compress",
        "source": source,
        "timeline": timeline(before, window=window, threshold=threshold, context=points, compactions=compactions),
        "compactions": compactions,
        "compactions_note": "A manual compression of the whole transcript (hermes-ctx compress), after its last message.",
        "compress": dict(report),
        "warnings": list(report.get("warnings") or ()),
    })


def eval_page(sources: Sequence[str], report: Mapping[str, Any]) -> dict[str, Any]:
    """``eval --html``: the runs side by side, probes per kind, losses."""
    return _redacted({"command": "eval", "source": ", ".join(sources), "eval": dict(report)})


def cache_page(source: str, report: Mapping[str, Any]) -> dict[str, Any]:
    """``cache-report --html``: per-request cache economy and prefix breaks."""
    return _redacted({"command": "cache-report", "source": source, "cache": dict(report)})

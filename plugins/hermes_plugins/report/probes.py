"""Each probe of one eval run, with its verdict, the message it came from and the archive
reference that recovers it: the report's ``probes`` section, taken from the run itself.

``eval``'s runner (``evaluation.runner``) lists every probe of a run in ``probe_detail`` (lost
first, at most ``PROBE_ROWS``, the rest counted in ``probe_detail_not_shown``) next to the
counts per kind in ``probes``; this module reshapes one run into the section's
``{"engine", "context_length", "counts", "rows", "not_shown"}``, so the rows and the counts
come from the same compression.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VERDICTS = ("kept", "recoverable", "lost")


def probe_section(run: Mapping[str, Any]) -> dict[str, Any]:
    """The report's probe section of one ``evaluate`` run."""
    return {
        "engine": run["engine"],
        "context_length": run["context_length"],
        "counts": {kind: {v: counts[v] for v in VERDICTS} for kind, counts in run["probes"].items()},
        "rows": [dict(row) for row in run.get("probe_detail") or ()],
        "not_shown": int(run.get("probe_detail_not_shown") or 0),
    }

"""Where a tool comes from: the label of its declared ``source`` or of its ``mcp__server__tool`` name.

Its own module because both the catalog (which tools are deferred) and the search index (the
label is a searchable field) read it, and the catalog builds on the index: here, below both,
neither has to import the other in a loop.
"""

from __future__ import annotations

import functools
import re

#: The label of a tool that declares no source: the host's own, which stays visible.
UNKNOWN_SOURCE = "other"

_MCP_NAME = re.compile(r"^mcp__([^_].*?)__(.+)$")
_SOURCE_PREFIX = re.compile(r"^mcp[-_:]+", re.IGNORECASE)


@functools.lru_cache(maxsize=1024)
def _label_of_source(source: str) -> str:
    return _SOURCE_PREFIX.sub("", source).strip()


def source_label(source: str, name: str) -> str:
    """Display label of a tool's origin: ``mcp-github`` -> ``github``; ``other`` when unknown."""
    if source:
        label = _label_of_source(source)
        if label:
            return label
    if name.startswith("mcp__"):
        match = _MCP_NAME.match(name)
        if match:
            return match.group(1)
    return UNKNOWN_SOURCE

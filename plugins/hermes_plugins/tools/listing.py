"""The listing of deferred tools embedded in the ``tool_search`` description (spec §16).

Sized to a token budget (ceil(chars / 4)), it degrades in steps until it fits:

1. ``full``   - every tool as ``- name: short description``, grouped by source;
2. ``names``  - one comma-separated line of names per source;
3. ``mixed`` / ``groups`` - the largest sources (by rendered size, then label) collapse one by
   one to a one-line count, until it fits (``groups`` when every source is collapsed);
4. ``none``   - no listing at all (the bare bridge).

Sources and tools are sorted, so the same tools give the same bytes on every turn (the tool
array sits in the cached prompt prefix).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from hermes_plugins.tools.catalog import TOOL_CALL, TOOL_DESCRIBE, CatalogEntry

SHORT_DESC_CHARS = 60
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.")

ListingForm = str  # "full" | "names" | "mixed" | "groups" | "none"


def short_desc(text: str, limit: int = SHORT_DESC_CHARS) -> str:
    """First sentence of ``text``, clipped to ``limit`` chars on a word boundary plus "…"."""
    text = " ".join(text.strip().split("\n\n", 1)[0].split())
    if not text:
        return ""
    for match in _SENTENCE_END.finditer(text):
        head = text[: match.end()]
        if not head.lower().endswith(_ABBREVIATIONS):
            text = head
            break
    if len(text) <= limit:
        return text
    clipped = text[:limit]
    space = clipped.rfind(" ")
    if space > limit // 2:
        clipped = clipped[:space]
    return clipped.rstrip(" ,;:-") + "…"


def fits(text: str, budget: int) -> bool:
    return math.ceil(len(text) / 4) <= budget


def _groups(entries: Sequence[CatalogEntry]) -> list[tuple[str, list[CatalogEntry]]]:
    by_label: dict[str, list[CatalogEntry]] = {}
    for entry in entries:
        by_label.setdefault(entry.label, []).append(entry)
    return [
        (label, sorted(by_label[label], key=lambda e: e.name)) for label in sorted(by_label)
    ]


def _header(count: int) -> str:
    return (
        f"Deferred tools ({count}), by source. Get a tool's parameters with {TOOL_DESCRIBE}, "
        f"run it with {TOOL_CALL}:"
    )


def _full(label: str, tools: list[CatalogEntry]) -> str:
    lines = [f"{label}:"]
    for entry in tools:
        desc = short_desc(entry.description)
        lines.append(f"- {entry.name}: {desc}" if desc else f"- {entry.name}")
    return "\n".join(lines)


def _names(label: str, tools: list[CatalogEntry]) -> str:
    return f"{label}: " + ", ".join(entry.name for entry in tools)


def _collapsed(label: str, tools: list[CatalogEntry]) -> str:
    n = len(tools)
    return f"{label}: {n} tool{'s' if n != 1 else ''}, names not listed (use tool_search)"


def render_listing(
    entries: Sequence[CatalogEntry], budget: int
) -> tuple[str | None, ListingForm]:
    """The largest listing form of ``entries`` within ``budget`` tokens, and its name."""
    if not entries:
        return None, "none"
    groups = _groups(entries)
    header = _header(len(entries))
    full = "\n".join([header, *(_full(label, tools) for label, tools in groups)])
    if fits(full, budget):
        return full, "full"
    blocks = [_names(label, tools) for label, tools in groups]
    names = "\n".join([header, *blocks])
    if fits(names, budget):
        return names, "names"
    # Collapse the biggest sources first: they free the most room per lost detail. The
    # length is kept as a running total so many sources do not make this quadratic.
    order = sorted(range(len(groups)), key=lambda i: (-len(blocks[i]), groups[i][0]))
    length = len(names)
    collapsed = 0
    for i in order:
        block = _collapsed(*groups[i])
        if len(block) >= len(blocks[i]):
            continue  # a short list of names is cheaper than its summary: keep it
        length += len(block) - len(blocks[i])
        blocks[i] = block
        collapsed += 1
        if math.ceil(length / 4) <= budget:
            text = "\n".join([header, *blocks])
            return text, "groups" if collapsed == len(groups) else "mixed"
    return None, "none"

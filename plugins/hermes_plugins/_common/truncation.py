"""The one head/tail split every over-long text in the prompt is cut by.

A long instructions or memory file keeps its first 70% and last 20% of the allowed size: the
opening usually states the rules and the end holds the latest additions. Context files and
memory both cut by these figures, so they live here once.
"""

from __future__ import annotations

HEAD_RATIO = 0.7
TAIL_RATIO = 0.2


def part_sizes(max_chars: int) -> tuple[int, int]:
    """How many characters of the head and of the tail a text capped at ``max_chars`` keeps."""
    return int(max_chars * HEAD_RATIO), int(max_chars * TAIL_RATIO)

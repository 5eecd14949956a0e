"""Cutting an over-long context file down to its head and tail, with a marker between them.

The middle of a long instructions file is the part a model misses least: the opening usually
states the rules and the end holds the latest additions. So an over-long file keeps its first
70% and last 20% of the allowed size, and the marker in between says what was left out and how
to read the whole file. Everything here works on ``str``, so a cut never splits a UTF-8
character; a cut also never separates the two halves of a ``\\r\\n`` line ending.
"""

from __future__ import annotations

from typing import NamedTuple

from hermes_plugins._common.truncation import part_sizes

# A cut moves back (head) or forward (tail) to a line break when one lies this close, so the
# model sees whole lines; never further, or a file of very long lines would lose most of a part.
LINE_SLACK_RATIO = 0.1
LINE_SLACK_MAX = 2_000


class Cut(NamedTuple):
    """The text that reaches the prompt, and how much of the original it keeps."""

    text: str
    head_chars: int
    tail_chars: int
    total_chars: int
    truncated: bool

    @property
    def kept_chars(self) -> int:
        return self.head_chars + self.tail_chars if self.truncated else self.total_chars


def _slack(size: int) -> int:
    return min(int(size * LINE_SLACK_RATIO), LINE_SLACK_MAX)


def cut_head(prefix: str, size: int) -> str:
    """The first ``size`` characters or fewer of ``prefix``, ending on a line break when near."""
    if len(prefix) <= size:
        return prefix
    head = prefix[:size]
    slack = _slack(size)
    newline = head.rfind("\n", max(0, size - slack - 1))
    if newline >= 0 and newline + 1 >= size - slack:
        return head[: newline + 1]
    if head.endswith("\r") and prefix[size] == "\n":
        return head[:-1]
    return head


def cut_tail(suffix: str, size: int) -> str:
    """The last ``size`` characters or fewer of ``suffix``, starting after a line break when near."""
    if len(suffix) <= size:
        return suffix
    if size <= 0:
        return ""
    start = len(suffix) - size
    tail = suffix[start:]
    slack = _slack(size)
    newline = tail.find("\n", 0, slack)
    if newline >= 0 and newline + 1 < len(tail):
        return tail[newline + 1 :]
    if tail.startswith("\n") and suffix[start - 1] == "\r":
        return tail[1:]
    return tail


def marker(
    label: str, read_path: str, head_chars: int, tail_chars: int, total_chars: int,
    *, approximate: bool = False,
) -> str:
    """The note that stands in for the omitted middle (without the surrounding blank lines)."""
    about = "about " if approximate else ""
    omitted = max(total_chars - head_chars - tail_chars, 0)
    return (
        f"[... {about}{omitted:,} characters of {label} omitted here: only the first "
        f"{head_chars:,} and the last {tail_chars:,} of {about}{total_chars:,} were kept. "
        f"The complete file is {read_path}; read it with the read_file tool when the "
        "missing part matters.]"
    )


def splice(
    prefix: str, suffix: str, total_chars: int, max_chars: int, *,
    label: str, read_path: str, approximate: bool = False,
) -> Cut:
    """Join the head of ``prefix`` and the tail of ``suffix`` around a marker.

    ``prefix`` and ``suffix`` are a beginning and an end of one text of ``total_chars``
    characters (the same string when the whole text is in memory; two separately read pieces
    when the middle of a huge file was never read).
    """
    head_size, tail_size = part_sizes(max_chars)
    head = cut_head(prefix, head_size)
    tail = cut_tail(suffix, tail_size)
    note = marker(label, read_path, len(head), len(tail), total_chars, approximate=approximate)
    before = "\n" if head.endswith("\n") else "\n\n"
    after = "\n\n" if tail else "\n"
    return Cut(
        text=f"{head}{before}{note}{after}{tail}" if head else f"{note}{after}{tail}",
        head_chars=len(head),
        tail_chars=len(tail),
        total_chars=total_chars,
        truncated=True,
    )


def truncate_text(text: str, max_chars: int, *, label: str, read_path: str) -> Cut:
    """``text`` unchanged when it fits in ``max_chars`` (exactly at the limit fits), else cut."""
    if len(text) <= max_chars:
        return Cut(text=text, head_chars=len(text), tail_chars=0, total_chars=len(text), truncated=False)
    return splice(text, text, len(text), max_chars, label=label, read_path=read_path)

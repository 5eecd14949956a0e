"""Inline reasoning blocks that models leave in their text (``<think>...</think>`` and kin).

One helper for everything that reads model text: the compressor drops them from the history
it serialises, and the summarisers from the summary they return (a third-party engine may rely
on either).
"""

from __future__ import annotations

import re

_TAGS = r"think|thinking|reasoning|reasoning_scratchpad|reflection|thought"
_CLOSED_BLOCK = re.compile(rf"<({_TAGS})\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_OPEN_TAG = re.compile(rf"<(?:{_TAGS})\b[^>]*>", re.IGNORECASE)
_CLOSE_TAG = re.compile(rf"</(?:{_TAGS})\s*>", re.IGNORECASE)


def strip_reasoning(text: str) -> str:
    """``text`` without inline reasoning blocks, trimmed.

    Besides complete blocks, two partial shapes are common: servers with a reasoning parser
    that drop the opening tag but keep ``</think>`` (everything before it goes), and a model
    cut off while still thinking (an opening tag at the very start that never closes: nothing
    is left). An unclosed tag further in is a mention (``the parser for <think> tags``) and
    stays.
    """
    if "<" not in text:
        return text.strip()
    text = _CLOSED_BLOCK.sub("", text)
    close = _CLOSE_TAG.search(text)
    if close and not _OPEN_TAG.search(text, 0, close.start()):
        text = text[close.end():]
    opening = _OPEN_TAG.match(text.lstrip())
    if opening and not _CLOSE_TAG.search(text):
        return ""
    return text.strip()

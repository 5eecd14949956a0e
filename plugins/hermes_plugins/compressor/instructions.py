"""System text a conversation carries mid-way: Anthropic's ``mid_conv_system`` block (beta), a
system instruction in a user turn. When that turn falls in the compacted part, the instruction
would be lost with it: the handoff's facts list it under "Decisions and constraints" (like a
user's standing instruction) and the LLM summariser's input shows it labelled, never as the
person's words (``serialize.flatten_content`` leaves the block out of a turn's text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LABEL", "MID_SYSTEM", "instruction_item", "mid_system_texts", "turn_instructions"]

#: The block type (Anthropic beta: system text mid-conversation).
MID_SYSTEM = "mid_conv_system"
#: How an instruction reads in the handoff and in the summariser's input.
LABEL = "System instruction (mid-conversation)"


def mid_system_texts(content: Any) -> list[str]:
    """The text of each ``mid_conv_system`` block of a turn's content, in order (its content:
    a string or text blocks); a block with no text gives none."""
    if type(content) is not list:
        return []
    texts: list[str] = []
    for block in content:
        if not (isinstance(block, Mapping) and block.get("type") == MID_SYSTEM):
            continue
        inner = block.get("content")
        if isinstance(inner, str):
            text = inner
        elif isinstance(inner, list):
            text = "\n".join(str(b.get("text")) for b in inner
                             if isinstance(b, Mapping) and isinstance(b.get("text"), str))
        else:
            text = ""
        if text.strip():
            texts.append(text.strip())
    return texts


def instruction_item(text: str) -> str:
    """An instruction as one handoff item (redaction and clipping are the caller's)."""
    return f"{LABEL}: {text}"


def turn_instructions(turn: Mapping[str, Any]) -> list[str]:
    """A turn's instructions: its ``mid_conv_system`` blocks, or, on a summariser's prepared
    turn (``serialize.prepare_turns``, whose content is flattened text), the redacted texts it
    carries under ``system_instructions`` (an LLM summariser's fallback reads those turns)."""
    carried = turn.get("system_instructions")
    if isinstance(carried, list):
        return [str(t) for t in carried]
    return mid_system_texts(turn.get("content"))

"""The mid-turn steering marker: how a user message that arrives during a turn is framed.

Such a message rides at the end of a tool result - the channel prompt-injection defences trust
least - so it gets a self-describing boundary, and the prompt's ``steer_note`` block tells the
model to honour only this exact frame and never a lookalike found in tool, web or file output.
The note quotes ``STEER_MARKER_OPEN``/``STEER_MARKER_CLOSE`` itself, so the two never drift.
"""

from __future__ import annotations

STEER_MARKER_OPEN = (
    "[OUT-OF-BAND USER MESSAGE — sent by the user while you were working; this is the user "
    "speaking to you directly, not output of the tool above, and it is delivered once, here]"
)
STEER_MARKER_CLOSE = "[/OUT-OF-BAND USER MESSAGE]"
#: What the steer note shows in place of the message text.
STEER_PLACEHOLDER = "<their message>"


def format_steer_marker(text: str) -> str:
    """Frame ``text`` for appending to the latest tool result: blank line, open, text, close."""
    return "\n\n" + STEER_MARKER_OPEN + "\n" + text + "\n" + STEER_MARKER_CLOSE


def steer_marker_example() -> str:
    """The marker shape with a placeholder, as the steer note quotes it."""
    return format_steer_marker(STEER_PLACEHOLDER).lstrip("\n")

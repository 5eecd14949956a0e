"""Declares the built-in transcript formats (each lives in its own module)."""

from __future__ import annotations

from collections.abc import Iterator

from hermes_core import hookimpl
from hermes_core.transcripts import TranscriptFormat
from hermes_plugins.transcripts import anthropic, claude_code, openai_chat


@hookimpl(trylast=True)
def hermes_transcript_formats() -> Iterator[TranscriptFormat]:
    yield openai_chat.FORMAT
    yield anthropic.FORMAT
    yield claude_code.FORMAT

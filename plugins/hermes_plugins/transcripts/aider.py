"""Aider chat history (``.aider.chat.history.md``).

Markdown written as the chat goes: ``# aider chat started at ...`` opens a session, ``####``
lines are what the user typed, lines quoted with ``>`` are Aider's own output (commands it
ran, edits applied, test output: kept as user messages marked ``_injected: "aider-output"``),
everything else is the model's reply. Aider records no tool calls.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
)
from hermes_plugins.transcripts.common import reads

NAME = "aider"
_STARTED = re.compile(r"^# aider chat started at (.+)$")


@reads("text")
def detect(source: TranscriptSource) -> Detection:
    head = source.head_text.lstrip()
    if _STARTED.match(head.splitlines()[0] if head else ""):
        return Detection.accept(0.95, "opens with '# aider chat started at'")
    if re.search(r"^#### \S", head, re.MULTILINE) and re.search(r"^> ", head, re.MULTILINE):
        return Detection.accept(0.5, "'####' user lines and '>' output lines")
    return Detection.refuse("no '# aider chat started at' header nor '####' user lines")


def read(source: TranscriptSource) -> Transcript:
    history = _History(source.report)
    for line in source.read_text().splitlines():
        history.add(line)
    history.flush()
    sessions = history.sessions
    return source.transcript(history.messages, metadata={"sessions_started": sessions} if sessions else {})


def _block_of(line: str, kind: str | None) -> tuple[str | None, str]:
    """(the kind of block ``line`` belongs to, its text without the marker); ``None`` for a blank
    line before any block."""
    if line.startswith("#### "):
        return "user", line[5:]
    if line.startswith(">"):
        return "output", line[2:] if line.startswith("> ") else line[1:]
    if not line.strip() and kind in (None, "header"):
        return None, line
    if not line.strip() and kind in ("user", "output"):
        return kind, line  # a blank line inside a request or an output block
    return "assistant", line


class _History:
    """The blocks of a chat history read so far: the lines of the open block, and the messages
    of the closed ones."""

    def __init__(self, report: ReportBuilder) -> None:
        self.report = report
        self.messages: list[dict[str, Any]] = []
        self.sessions: list[str] = []
        self.kind: str | None = None
        self.lines: list[str] = []
        self.fenced = False  # inside a code fence of a reply, '>' and '####' lines are the model's text

    def add(self, line: str) -> None:
        report = self.report
        if self.kind == "assistant" and line.lstrip().startswith("```"):
            self.fenced = not self.fenced
        if self.fenced:
            self.lines.append(line)
            return
        started = _STARTED.match(line)
        if started:
            self.flush()
            report.saw()
            report.absorbed("session_header")
            self.sessions.append(started.group(1).strip())
            self.kind = "header"
            return
        block, line = _block_of(line, self.kind)
        if block is None:
            return
        if block != self.kind:
            self.flush()
            report.saw()
            self.kind = block
        self.lines.append(line)

    def flush(self) -> None:
        """Close the open block: its message, or a count when it is empty."""
        kind, report = self.kind, self.report
        if kind is None:
            return
        text = "\n".join(self.lines).strip("\n")
        if kind == "header":
            pass
        elif not text.strip():
            report.dropped(f"empty_{kind}_block")
        elif kind == "user":
            self.messages.append({"role": "user", "content": text})
            report.converted()
        elif kind == "output":
            self.messages.append({"role": "user", "content": text, "_injected": "aider-output"})
            report.relabelled("marked_injected:aider-output")
            report.converted()
        else:
            self.messages.append({"role": "assistant", "content": text})
            report.converted()
        self.kind, self.lines = None, []


FORMAT = TranscriptFormat(
    name=NAME,
    description="Aider chat history Markdown (.aider.chat.history.md)",
    versions="Aider .aider.chat.history.md",
    detect=detect,
    read=read,
)

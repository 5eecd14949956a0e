"""Aider chat history (``.aider.chat.history.md``).

Markdown written as the chat goes: ``# aider chat started at ...`` opens a session, ``####``
lines are what the user typed, lines quoted with ``>`` are Aider's own output (commands it
ran, edits applied, test output: kept as user messages marked ``_injected: "aider-output"``),
everything else is the model's reply. Aider records no tool calls.
"""

from __future__ import annotations

import re
from typing import Any

from hermes_core.transcripts import (
    Detection,
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
    report = source.report
    messages: list[dict[str, Any]] = []
    sessions: list[str] = []
    kind: str | None = None
    lines: list[str] = []

    def flush() -> None:
        nonlocal kind, lines
        if kind is None:
            return
        text = "\n".join(lines).strip("\n")
        if kind == "header":
            pass
        elif not text.strip():
            report.dropped(f"empty_{kind}_block")
        elif kind == "user":
            messages.append({"role": "user", "content": text})
            report.converted()
        elif kind == "output":
            messages.append({"role": "user", "content": text, "_injected": "aider-output"})
            report.relabelled("marked_injected:aider-output")
            report.converted()
        else:
            messages.append({"role": "assistant", "content": text})
            report.converted()
        kind, lines = None, []

    fenced = False  # inside a code fence of a reply, '>' and '####' lines are the model's text
    for line in source.read_text().splitlines():
        if kind == "assistant" and line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced:
            lines.append(line)
            continue
        started = _STARTED.match(line)
        if started:
            flush()
            report.saw()
            report.absorbed("session_header")
            sessions.append(started.group(1).strip())
            kind = "header"
            continue
        if line.startswith("#### "):
            block = "user"
            line = line[5:]
        elif line.startswith(">"):
            block = "output"
            line = line[2:] if line.startswith("> ") else line[1:]
        elif kind in (None, "header") and not line.strip():
            continue
        elif kind in ("user", "output") and not line.strip():
            lines.append(line)
            continue
        else:
            block = "assistant"
        if block != kind:
            flush()
            report.saw()
            kind = block
        lines.append(line)
    flush()
    return source.transcript(messages, metadata={"sessions_started": sessions} if sessions else {})


FORMAT = TranscriptFormat(
    name=NAME,
    description="Aider chat history Markdown (.aider.chat.history.md)",
    versions="Aider .aider.chat.history.md",
    detect=detect,
    read=read,
)

"""A request log: ``{"requests": [...]}``, each entry one request as a host sent it (the form
``hermes-ctx cache-report`` replays; ``examples/transcripts/compressed_session.json``).

An entry gives its ``messages``, or ``append``s to the previous request's; ``system`` and
``tools`` carry over from the entry before when absent (top-level ones start the log). As a
transcript, the log is its last request: the conversation as the host last sent it. What a
compression removed from the history before that request is not in the last request, so the
reader says how many requests rewrote the history instead of appending to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    InvalidMessagesError,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    validate_messages,
)
from hermes_plugins.transcripts.openai_chat import convert_message

NAME = "request-log"


def detect(source: TranscriptSource) -> Detection:
    if source.kind != "json":
        return Detection.refuse(f"not JSON ({source.kind})")
    doc = source.document_or_none()
    if isinstance(doc, Mapping) and isinstance(doc.get("requests"), list):
        return Detection.accept(0.7, "an object with a 'requests' list")
    return Detection.refuse("not an object with a 'requests' list")


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidMessagesError(f"{what} must be a list")
    return value


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    doc = source.document()
    entries = _list(doc.get("requests") if isinstance(doc, Mapping) else None, f"{source.name}: 'requests'")
    system = doc.get("system") if isinstance(doc.get("system"), str) else None
    tools: list[Any] = list(_list(doc.get("tools") or [], f"{source.name}: 'tools'"))
    messages: list[Any] = []
    rewrites = 0
    for number, entry in enumerate(entries):
        where = f"{source.name}: request {number}"
        if not isinstance(entry, Mapping):
            raise InvalidMessagesError(f"{where}: expected an object")
        if isinstance(entry.get("system"), str):
            system = entry["system"]
        if "tools" in entry:
            tools = list(_list(entry["tools"], f"{where}: 'tools'"))
        if "append" in entry:
            added = _list(entry["append"], f"{where}: 'append'")
            validate_messages(added)
            messages = messages + added
        elif "messages" in entry:
            given = _list(entry["messages"], f"{where}: 'messages'")
            validate_messages(given)
            rewrites += number > 0  # the first request gives its messages; later ones rewrote
            messages = list(given)
        else:
            raise InvalidMessagesError(f"{where}: expected 'messages' or 'append'")
    if rewrites:
        report.warn(
            f"a request log of {len(entries)} requests, read as its last request; "
            f"{rewrites} request(s) rewrote the history (compressions), and what they removed is "
            "not in the last request"
        )
    report.saw(len(messages))  # the records of the transcript: the last request's messages
    if messages and system is None and messages[0].get("role") in ("system", "developer") \
            and isinstance(messages[0].get("content"), str):
        system = messages[0]["content"]
        messages = messages[1:]
        report.absorbed("system_prompt")
    out = [convert_message(dict(m), report) for m in messages]
    report.converted(len(out))
    return source.transcript(out, system_prompt=system, tools=[dict(t) for t in tools if isinstance(t, Mapping)])


FORMAT = TranscriptFormat(
    name=NAME,
    description="a request log {\"requests\": [{messages | append, system, tools}]}, read as its last request",
    detect=detect,
    read=read,
)

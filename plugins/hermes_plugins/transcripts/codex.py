"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{timestamp, type, payload}``: ``session_meta`` (id, cwd, cli version, base
instructions: the system prompt) and ``turn_context`` (model) go to the transcript fields;
``response_item`` payloads are Responses API items (converted like ``openai-responses``);
``compacted`` holds Codex's own summary (marked ``_summary: "codex"``); ``event_msg`` lines
repeat what the items hold for the UI and are dropped by event type. Older rollouts (a first
line with ``instructions``, then bare items and ``record_type: state`` lines) read too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.transcripts import (
    Detection,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
)
from hermes_plugins.transcripts.common import head_objects, object_records, reads
from hermes_plugins.transcripts.responses import ITEM_TYPES, ItemConverter

NAME = "codex"
ENVELOPES = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    enveloped = [r for r in records if r.get("type") in ENVELOPES and "payload" in r]
    if len(enveloped) >= len(records) * 0.9:
        return Detection.accept(0.95, "{timestamp, type, payload} envelopes (session_meta, response_item ...)")
    first = records[0]
    if "instructions" in first and "id" in first and all(
        r.get("type") in ITEM_TYPES or r.get("record_type") for r in records[1:]
    ):
        return Detection.accept(0.9, "a legacy rollout: session header, then Responses items")
    return Detection.refuse("no Codex envelopes (session_meta/response_item with payload)")


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    converter = ItemConverter(report)
    metadata: dict[str, Any] = {}
    model = None
    system_prompt = None
    for lineno, record in object_records(source):
        kind = record.get("type")
        payload = record.get("payload")
        if kind == "response_item" and isinstance(payload, Mapping):
            converter.add(payload)
        elif kind == "session_meta" and isinstance(payload, Mapping):
            for key in ("id", "cwd", "cli_version", "originator", "model_provider", "source"):
                if payload.get(key) is not None:
                    metadata.setdefault("session_id" if key == "id" else key, payload[key])
            base = payload.get("base_instructions") or payload.get("instructions")
            if isinstance(base, Mapping):
                base = base.get("text")
            if isinstance(base, str) and system_prompt is None:
                system_prompt = base
            report.absorbed("session_meta")
        elif kind == "turn_context" and isinstance(payload, Mapping):
            if isinstance(payload.get("model"), str):
                model = model or payload["model"]
            report.absorbed("turn_context")
        elif kind == "compacted" and isinstance(payload, Mapping):
            text = payload.get("message")
            converter._open = None
            converter.messages.append({"role": "user", "content": str(text or ""), "_summary": "codex"})
            report.converted()
            report.relabelled("marked_summary:codex")
        elif kind == "event_msg":
            event = payload.get("type") if isinstance(payload, Mapping) else None
            report.dropped(f"event_msg:{event}")
        elif lineno == 1 and "instructions" in record and "payload" not in record:
            if isinstance(record.get("instructions"), str):
                system_prompt = record["instructions"] or None
            metadata["session_id"] = record.get("id")
            report.absorbed("legacy_session_header")
        elif record.get("record_type") == "state":
            report.dropped("legacy_state")
        elif record.get("type") in ITEM_TYPES:
            converter.add(record)
        else:
            report.dropped(f"unknown:{kind}")
    if converter.system_prompt and system_prompt is None:
        system_prompt = converter.system_prompt
    return source.transcript(converter.finish(), system_prompt=system_prompt, model=model, metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="Codex CLI rollout JSONL (~/.codex/sessions/.../rollout-*.jsonl)",
    detect=detect,
    read=read,
)

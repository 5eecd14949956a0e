"""goose sessions (``~/.local/share/goose/sessions/<id>.jsonl``, before goose moved them into
SQLite): a metadata line (``working_dir``, ``description``, ``message_count``, token counts:
absorbed), then one message a line: ``{id?, role, created, content: [...], metadata?}``.

Content items are tagged by ``type``: ``text``, ``image`` (a placeholder), ``toolRequest``
(``toolCall: {status, value: {name, arguments}}`` - a call; a failed parse, ``status: error``,
is kept as a call named by its error, counted), ``toolResponse`` (``toolResult: {status,
value}`` where ``value`` is MCP content or ``{content, isError}``: a tool result, ``isError`` or
``status: error`` marks ``_is_error``; parts whose ``annotations.audience`` leaves out the
assistant are the user's view only and dropped, counted), ``thinking`` (``_reasoning``), ``redactedThinking``
(dropped, counted). UI-only items (``toolConfirmationRequest``, ``actionRequired``,
``systemNotification``, ``summarizationRequested``, ``contextLengthExceeded``,
``conversationCompacted``) are dropped by type. A message with ``metadata.agentVisible: false``
never reached the model (dropped); a user-role one with ``userVisible: false`` is goose's own
text (marked ``_injected: "harness-message"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    image_placeholder,
    make_tool_call,
)
from hermes_plugins.transcripts.common import (
    head_objects,
    mapping,
    mark_user_text,
    object_records,
    reads,
    simplify_parts,
)

NAME = "goose"
_BLOCKS = frozenset({
    "text", "image", "toolRequest", "toolResponse", "thinking", "redactedThinking", "frontendToolRequest",
    "toolConfirmationRequest", "actionRequired", "systemNotification", "summarizationRequested",
    "contextLengthExceeded", "conversationCompacted",
})
_META_KEYS = ("working_dir", "description", "message_count", "total_tokens", "schedule_id")


def _is_message(record: Mapping[str, Any]) -> bool:
    content = record.get("content")
    # Later versions add content types: every item typed, and some known.
    return record.get("role") in ("user", "assistant") and isinstance(content, list) and all(
        isinstance(c, Mapping) and isinstance(c.get("type"), str) for c in content
    ) and (not content or any(c["type"] in _BLOCKS for c in content))


@reads("jsonl")
def detect(source: TranscriptSource) -> Detection:
    records = head_objects(source)
    if not records:
        return Detection.refuse("no JSON object lines")
    first, rest = records[0], records[1:]
    header = "role" not in first and any(k in first for k in _META_KEYS)
    messages = [r for r in (rest if header else records) if _is_message(r)]
    if not messages or len(messages) < len(rest if header else records) * 0.9:
        return Detection.refuse("lines are not goose messages (role, created, typed content)")
    if header:
        return Detection.accept(0.95, "a session metadata line (working_dir ...), then messages")
    if any("created" in m for m in messages) and any(
        c.get("type") in ("toolRequest", "toolResponse") for m in messages for c in m["content"]
    ):
        return Detection.accept(0.9, "messages with created and toolRequest/toolResponse content")
    return Detection.refuse("no session metadata line and no goose tool content")


def _call(item: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    call = mapping(item.get("toolCall"))
    value = mapping(call.get("value"))
    if call.get("status") == "error" or not value:
        report.changed("invalid_tool_requests_kept")
        return make_tool_call(str(item.get("id") or ""), "invalid_tool_call", {"error": call.get("error")})
    return make_tool_call(str(item.get("id") or ""), str(value.get("name") or ""), value.get("arguments"))


def _result(item: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    outcome = mapping(item.get("toolResult"))
    value = outcome.get("value")
    failed = outcome.get("status") == "error"
    if isinstance(value, Mapping):  # newer goose: a CallToolResult
        failed = failed or bool(value.get("isError"))
        value = value.get("content")
    parts: list[dict[str, Any]] = []
    if failed and value is None:
        parts.append({"type": "text", "text": str(outcome.get("error") or "")})
    for content in value if isinstance(value, list) else ():
        content = mapping(content)
        audience = mapping(content.get("annotations")).get("audience")
        if isinstance(audience, list) and "assistant" not in audience:
            report.changed("result_parts_for_the_user_only_dropped")  # goose never sends them
            continue
        if content.get("type") == "text":
            parts.append({"type": "text", "text": str(content.get("text") or "")})
        elif content.get("type") == "image":
            parts.append(image_placeholder({"source": {"media_type": content.get("mimeType"),
                                                       "data": str(content.get("data") or "")}}, report))
        elif content.get("type") == "resource":
            resource = mapping(content.get("resource"))
            parts.append({"type": "text", "text": str(resource.get("text") or f"[resource {resource.get('uri')}]")})
        else:
            report.changed(f"result_parts_kept_as_text:{content.get('type')}")
            parts.append({"type": "text", "text": json.dumps(dict(content), ensure_ascii=False, default=str)})
    body = simplify_parts(parts)
    if isinstance(body, list) and all(p.get("type") == "text" for p in body):
        body = "\n".join(str(p["text"]) for p in body)
    result: dict[str, Any] = {"role": "tool", "tool_call_id": str(item.get("id") or ""), "content": body}
    if failed:
        result["_is_error"] = True
    return result


def convert_message(record: Mapping[str, Any], report: ReportBuilder) -> list[dict[str, Any]]:
    """One goose message (a JSONL line or a sessions.db row: role, typed content, metadata) as
    OpenAI chat messages; shared with the sessions.db reader."""
    role = record["role"]
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for item in record["content"]:
        kind = item.get("type")
        if kind == "text":
            parts.append({"type": "text", "text": str(item.get("text") or "")})
        elif kind == "image":
            parts.append(image_placeholder({"source": {"media_type": item.get("mimeType"),
                                                       "data": str(item.get("data") or "")}}, report))
        elif kind in ("toolRequest", "frontendToolRequest"):
            calls.append(_call(item, report))
        elif kind == "toolResponse":
            results.append(_result(item, report))
        elif kind == "thinking":
            if item.get("thinking"):
                reasoning.append(str(item["thinking"]))
                report.changed("reasoning_kept_as_metadata")
        elif kind == "redactedThinking":
            report.changed("encrypted_reasoning_dropped")
        else:
            report.changed(f"ui_blocks_dropped:{kind}")
    if role == "assistant":
        # A response in an assistant message (rare) goes after its calls.
        return [*_assistant(parts, calls, reasoning), *results]
    return [*results, *_user(record, parts, report)]


def _assistant(parts: list[dict[str, Any]], calls: list[dict[str, Any]], reasoning: list[str]) -> list[dict[str, Any]]:
    """The assistant message of a record's text, calls and reasoning (none when it has none)."""
    if not (parts or calls or reasoning):
        return []
    message: dict[str, Any] = {"role": "assistant", "content": simplify_parts(parts) if parts else None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    if reasoning:
        message["_reasoning"] = "\n\n".join(reasoning)
    return [message]


def _user(record: Mapping[str, Any], parts: list[dict[str, Any]], report: ReportBuilder) -> list[dict[str, Any]]:
    """The user message of a record's text, marked (none when it has no text)."""
    if not parts:
        return []
    message = {"role": "user", "content": simplify_parts(parts)}
    if mapping(record.get("metadata")).get("userVisible") is False:
        message["_injected"] = "harness-message"
        report.relabelled("marked_injected:harness-message")
    else:
        mark_user_text(message, report)
    return [message]


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    messages: list[dict[str, Any]] = []
    metadata: dict[str, Any] = {}
    for lineno, record in object_records(source):
        if lineno == 1 and "role" not in record:
            metadata.update({k: v for k, v in record.items() if isinstance(v, (str, int, float, bool))})
            report.absorbed("session_metadata")
            continue
        if record.get("role") not in ("user", "assistant") or not isinstance(record.get("content"), list):
            report.dropped(f"unknown_record:{record.get('role')}")
            continue
        if mapping(record.get("metadata")).get("agentVisible") is False:
            report.dropped("not_visible_to_the_model")
            continue
        records = {**record, "content": [c for c in record["content"] if isinstance(c, Mapping)]}
        converted = convert_message(records, report)
        if not converted:
            report.dropped(f"empty_{record['role']}_message")
            continue
        messages.extend(converted)
        report.converted()
    return source.transcript(messages, metadata=metadata)


FORMAT = TranscriptFormat(
    name=NAME,
    description="goose session JSONL (~/.local/share/goose/sessions/<id>.jsonl)",
    versions="goose JSONL sessions (before its SQLite session store)",
    detect=detect,
    read=read,
)

"""OpenAI chat messages: a JSON array, ``{"messages": [...]}`` (optionally with ``tools`` and
``model``: a request body) or JSON Lines, one message per line. Also the writer of the
project's own output."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import (
    ROLES,
    Detection,
    InvalidMessagesError,
    ReportBuilder,
    Transcript,
    TranscriptFormat,
    TranscriptSource,
    check_depth,
    image_placeholder,
    validate_messages,
)
from hermes_plugins.transcripts.common import (
    CALL_BLOCKS,
    OUTPUT_BLOCKS,
    call_from_block,
    has_anthropic_blocks,
    is_openai_message,
    other_block,
    result_from_block,
    tag,
    unknown_role_message,
)

NAME = "openai"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _messages_of(doc: Any) -> list[Any] | None:
    if isinstance(doc, list):
        return doc
    messages = doc.get("messages") if isinstance(doc, Mapping) else None
    if isinstance(messages, list):
        return messages
    if isinstance(doc, Mapping) and isinstance(doc.get("role"), str):
        return [doc]  # a single message (a one-line JSON Lines file)
    return None


def _roles_all_named(records: Sequence[Any]) -> bool:
    """Every record a message with a string role, at least one of them a role we know."""
    return bool(records) and all(isinstance(r, Mapping) and isinstance(r.get("role"), str) for r in records) \
        and any(is_openai_message(r) for r in records)


def detect(source: TranscriptSource) -> Detection:
    if source.kind == "jsonl":
        records = [r for r in source.head_records if r is not None]
        if records and is_openai_message(records[0]) and not all(is_openai_message(r) for r in records):
            return Detection.accept(0.25, "lines that start with chat messages")
        if records and all(is_openai_message(r) for r in records):
            if has_anthropic_blocks(records):
                return Detection.refuse("lines hold Anthropic content blocks")
            return Detection.accept(0.6, "every line is a chat message with a role")
        if _roles_all_named(records) and not has_anthropic_blocks(records):
            # Chat messages, some with a role this reader does not know: read, each unknown one
            # kept as marked user text (tolerant reading), rather than the whole file refused.
            return Detection.accept(0.25, "chat messages, some with roles of their own")
        return Detection.refuse("JSON lines that are not chat messages (no role)")
    if source.kind != "json":
        return Detection.refuse(f"not JSON ({source.kind})")
    doc = source.document_or_none()
    messages = _messages_of(doc)
    if messages is None:
        return Detection.refuse("not a JSON array of messages nor an object with 'messages'")
    if not messages:
        return Detection.accept(0.3, "an empty message list")
    sample = messages[:200]
    if not all(is_openai_message(m) for m in sample):
        if ((isinstance(sample[0], Mapping) and is_openai_message(sample[0])) or _roles_all_named(sample)) \
                and not has_anthropic_blocks(sample):
            # Mostly messages: read it, so the error names the malformed one.
            return Detection.accept(0.25, "a list that starts with chat messages")
        return Detection.refuse("items are not chat messages with a known role")
    if has_anthropic_blocks(sample):
        return Detection.refuse("messages hold Anthropic content blocks (tool_use/tool_result)")
    sure = any(m.get("role") in ("tool", "system", "developer") or m.get("tool_calls") for m in sample)
    return Detection.accept(0.6 if sure else 0.5, "chat messages with OpenAI roles")


def convert_message(message: dict[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """Normalise one message in place: images become placeholders, dict arguments JSON.

    Messages pass through with their own keys, so their depth is checked here (readers that
    build messages from blocks produce bounded ones)."""
    check_depth(message, f"{report.source or 'input'}: a {message.get('role')} message")
    content = message.get("content")
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, Mapping) and part.get("type") in ("image_url", "image", "input_image"):
                content[i] = image_placeholder(part, report)
    for call in message.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(fn, dict) and not isinstance(fn.get("arguments"), str):
            fn["arguments"] = json.dumps(fn.get("arguments") or {}, ensure_ascii=False)
            report.changed("tool_arguments_encoded_as_json")
    return message


#: Content part types OpenAI chat documents (anything else is non-standard and counted).
_STANDARD_PARTS = frozenset({"text", "image_url", "input_audio", "file", "refusal"})


def _map_nonstandard_blocks(message: dict[str, Any], report: ReportBuilder) -> list[dict[str, Any]]:
    """Move non-standard parts whose meaning is clear out of ``message``'s content: a
    ``tool_call`` part becomes a call of the (assistant) message, a ``tool_output`` part a tool
    message (returned), a ``thinking``/``reasoning`` part its ``_reasoning``; other unknown
    parts stay as text naming them. All counted."""
    content = message.get("content")
    if not isinstance(content, list) or all(
        isinstance(p, Mapping) and tag(p.get("type")) in _STANDARD_PARTS for p in content
    ):
        return []
    parts: list[Any] = []
    results: list[dict[str, Any]] = []
    for part in content:
        kind = tag(part.get("type")) if isinstance(part, Mapping) else None
        if kind in _STANDARD_PARTS:
            parts.append(part)
        elif kind in CALL_BLOCKS and message["role"] == "assistant" and isinstance(part, Mapping):
            message.setdefault("tool_calls", []).append(call_from_block(part, report))
        elif kind in OUTPUT_BLOCKS and isinstance(part, Mapping):
            results.append(result_from_block(part, report))
        elif kind in ("thinking", "reasoning") and message["role"] == "assistant" and isinstance(part, Mapping):
            text = part.get("thinking", part.get("text", part.get("reasoning")))
            if isinstance(text, str) and text:
                message["_reasoning"] = "\n\n".join(filter(None, [message.get("_reasoning"), text]))
            report.changed(f"nonstandard_blocks_mapped:{kind}")
        elif isinstance(part, Mapping):
            parts.append(other_block(part, report))
        else:
            parts.append({"type": "text", "text": str(part)})
            report.changed("non_object_parts_kept_as_text")
    if all(p.get("type") == "text" for p in parts) and parts:
        message["content"] = "\n".join(str(p.get("text") or "") for p in parts)
    else:
        message["content"] = parts or (None if message.get("tool_calls") else "")
    return results


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    tools: list[dict[str, Any]] = []
    model = None
    system_prompt: str | None = None
    metadata: dict[str, Any] = {}
    if source.kind == "jsonl":
        raw: Any = (record for _lineno, record in source.records())
    else:
        doc = source.document()
        raw = _messages_of(doc)
        if raw is None:
            raise ValueError("expected a JSON array of messages or an object with 'messages'")
        report.saw(len(raw))
        if isinstance(doc, Mapping) and "messages" in doc:
            tools = [dict(t) for t in doc.get("tools") or () if isinstance(t, Mapping)]
            model = doc.get("model") if isinstance(doc.get("model"), str) else None
            metadata = {k: v for k, v in doc.items() if k not in ("messages", "tools", "model", "system")
                        and isinstance(v, (str, int, float, bool))}
            if isinstance(doc.get("system"), str):
                system_prompt = doc["system"]
    messages: list[dict[str, Any]] = []
    for number, message in enumerate(raw):
        role = message.get("role") if isinstance(message, Mapping) else None
        if isinstance(role, str) and role and role not in ROLES:
            # Tolerant: a role no provider knows is kept as marked user text, never a refusal.
            kept = unknown_role_message(message, role, report)
            if kept is not None:
                messages.append(kept)
            continue
        try:
            validate_messages((message,))
        except InvalidMessagesError as exc:
            what = str(exc).partition(": ")[2]
            raise InvalidMessagesError(f"{source.name}: message {number}: {what}", index=number) from None
        if not messages and system_prompt is None and message["role"] in ("system", "developer") \
                and isinstance(message.get("content"), str):
            system_prompt = message["content"]
            report.absorbed("system_prompt")
            continue
        converted = convert_message(message, report)
        results = _map_nonstandard_blocks(converted, report)
        if converted["role"] == "assistant":
            messages.append(converted)
            messages.extend(results)
        else:  # results answer earlier calls: they come before the message's own text
            messages.extend(results)
            if converted.get("content") not in (None, "", []) or not results:
                messages.append(converted)
        report.converted()
    return source.transcript(messages, system_prompt=system_prompt, tools=tools, model=model,
                             metadata=metadata)


def dumps(data: Any) -> str:
    """JSON text that is always valid UTF-8 (a stray lone surrogate is written escaped)."""
    text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
    if _LONE_SURROGATE.search(text):
        text = json.dumps(data, ensure_ascii=True, indent=1, default=str)
    return text + "\n"


def write(transcript: Transcript, notes: ReportBuilder) -> str:
    messages = transcript.chat_messages()
    if transcript.tools or transcript.model:
        body: dict[str, Any] = {}
        if transcript.model:
            body["model"] = transcript.model
        if transcript.tools:
            body["tools"] = list(transcript.tools)
        body["messages"] = messages
        return dumps(body)
    return dumps(messages)


FORMAT = TranscriptFormat(
    name=NAME,
    description="OpenAI chat messages: JSON array, {\"messages\": [...]} or JSON Lines",
    versions="Chat Completions API message shape",
    detect=detect,
    read=read,
    write=write,
)

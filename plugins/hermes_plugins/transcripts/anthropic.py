"""Anthropic Messages: ``{"system", "messages", "tools", "model"}`` (a request body) or a bare
list of messages whose ``content`` holds blocks (``text``, ``tool_use``, ``tool_result`` with
``is_error``, ``thinking``/``redacted_thinking``, ``image``). Read and written.

Writing: tool results become ``tool_result`` blocks of a user message, ``_is_error`` becomes
``is_error``; Anthropic requires unique ``tool_use`` ids within a request, so a reused id
(gpt-4o and SWE-agent reuse them) is renamed together with the result that answers it (paired
by position, the project's pairing rule), and counted.
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
    bounded,
    content_text,
    match_results,
)
from hermes_plugins.transcripts.common import (
    assistant_from_blocks,
    has_anthropic_blocks,
    reads,
    unknown_role_message,
    user_from_blocks,
)
from hermes_plugins.transcripts.openai_chat import dumps

NAME = "anthropic"


def _messages_of(doc: Any) -> list[Any] | None:
    if isinstance(doc, list):
        return doc
    messages = doc.get("messages") if isinstance(doc, Mapping) else None
    return messages if isinstance(messages, list) else None


@reads("json")
def detect(source: TranscriptSource) -> Detection:
    doc = source.document_or_none()
    messages = _messages_of(doc)
    if messages is None:
        return Detection.refuse("not a list of messages nor an object with 'messages'")
    sample = messages[:200]
    if not all(isinstance(m, Mapping) and m.get("role") in ("user", "assistant") for m in sample):
        # Tolerant: a few messages of another role among Anthropic blocks are read as marked text.
        usual = [m for m in sample if isinstance(m, Mapping) and m.get("role") in ("user", "assistant")]
        if has_anthropic_blocks(sample) and len(sample) - len(usual) <= max(1, len(sample) // 10) and all(
                isinstance(m, Mapping) and isinstance(m.get("role"), str) for m in sample):
            return Detection.accept(0.7, "content blocks tool_use/tool_result, a few other roles")
        return Detection.refuse("roles other than user/assistant (Anthropic has no system or tool role)")
    if has_anthropic_blocks(sample):
        return Detection.accept(0.85, "content blocks tool_use/tool_result/thinking")
    if isinstance(doc, Mapping) and "system" in doc:
        return Detection.accept(0.45, "a request body with a top-level 'system' (no blocks)")
    return Detection.accept(0.4, "user/assistant messages only")


def _system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    return content_text(system) if isinstance(system, list) else str(system)


def _tool_from_anthropic(tool: Mapping[str, Any]) -> dict[str, Any]:
    if "input_schema" not in tool:
        return dict(tool)
    return {"type": "function", "function": {
        "name": tool.get("name", ""), "description": tool.get("description", ""),
        "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
    }}


def read(source: TranscriptSource) -> Transcript:
    report = source.report
    doc = source.document()
    raw = _messages_of(doc)
    if raw is None:
        raise ValueError("expected a list of messages or an object with 'messages'")
    report.saw(len(raw))
    messages: list[dict[str, Any]] = []
    for number, item in enumerate(raw):
        role = item.get("role") if isinstance(item, Mapping) else None
        if isinstance(role, str) and role and role not in ("user", "assistant"):
            kept = unknown_role_message(item, role, report)  # tolerant: kept marked, counted
            if kept is not None:
                messages.append(kept)
            continue
        if not isinstance(item, Mapping) or role not in ("user", "assistant"):
            raise ValueError(f"message {number}: expected role user or assistant")
        extra = {k: v for k, v in item.items() if k.startswith("_")}
        content = item.get("content")
        if item["role"] == "assistant":
            blocks = content if isinstance(content, list) else [content] if content else []
            converted = [assistant_from_blocks(blocks, report)]
        else:
            converted = user_from_blocks(content, report)
        if not converted:
            report.dropped("empty_message")
            continue
        target = converted[-1] if item["role"] == "user" else converted[0]
        for key, value in extra.items():
            target.setdefault(key, value)
        messages.extend(converted)
        report.converted()
        if len(converted) > 1:
            report.changed("user_message_split_into_tool_results", len(converted) - 1)
    system = tools = model = None
    metadata: dict[str, Any] = {}
    if isinstance(doc, Mapping):
        system = _system_text(doc.get("system"))
        tools = [_tool_from_anthropic(t) for t in doc.get("tools") or () if isinstance(t, Mapping)]
        model = doc.get("model") if isinstance(doc.get("model"), str) else None
        metadata = {k: v for k, v in doc.items() if k not in ("messages", "tools", "model", "system")
                    and isinstance(v, (str, int, float, bool))}
    return source.transcript(messages, system_prompt=system, tools=tools or (), model=model,
                             metadata=metadata)


# --- writing ----------------------------------------------------------------------------------


def _input_of(arguments: Any, notes: ReportBuilder) -> Any:
    if isinstance(arguments, Mapping):
        return dict(arguments)
    try:
        value = bounded.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:  # invalid, or too deep to parse: kept as the string it is, below
        value = None
    if not isinstance(value, dict):
        notes.changed("non_object_arguments_wrapped")
        return {"arguments": arguments}
    return value


def _blocks_of(content: Any) -> list[dict[str, Any]]:
    if content is None or content == "":
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        out = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                out.append({"type": "text", "text": str(part.get("text") or "")})
            elif isinstance(part, Mapping):
                out.append(dict(part))
            else:
                out.append({"type": "text", "text": str(part)})
        return out
    return [{"type": "text", "text": json.dumps(content, ensure_ascii=False, default=str)}]


def _tool_to_anthropic(tool: Mapping[str, Any]) -> dict[str, Any]:
    fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else None
    if fn is None:
        return dict(tool)
    return {"name": fn.get("name", ""), "description": fn.get("description", ""),
            "input_schema": fn.get("parameters") or {"type": "object", "properties": {}}}


def _unique_call_ids(
    source: list[dict[str, Any]], notes: ReportBuilder
) -> tuple[dict[tuple[int, int], str], dict[int, str]]:
    """``(id of each call by (message, position), new id of each renamed call's result by its
    index)``: the Messages API wants unique ``tool_use`` ids, so a reused one gets a suffix
    (counted) and the result the pairing rule matched to it follows."""
    answers, _unanswered = match_results(source)
    answered_by = {match: result for result, match in answers.items()}
    renamed: dict[int, str] = {}  # result index -> new id
    new_ids: dict[tuple[int, int], str] = {}
    used: set[str] = set()
    for index, message in enumerate(source):
        for position, call in enumerate(message.get("tool_calls") or ()):
            ident = str(call.get("id") or call.get("call_id") or "") or f"toolu_{index}_{position}"
            if ident in used:
                k = 2
                while f"{ident}__{k}" in used:
                    k += 1
                ident = f"{ident}__{k}"
                notes.changed("duplicate_tool_ids_renamed")
                if (index, position) in answered_by:
                    renamed[answered_by[(index, position)]] = ident
            used.add(ident)
            new_ids[(index, position)] = ident
    return new_ids, renamed


def to_anthropic(transcript: Transcript, notes: ReportBuilder) -> dict[str, Any]:
    """The transcript as an Anthropic Messages request body."""
    source = list(transcript.messages)
    new_ids, renamed = _unique_call_ids(source, notes)
    out: list[dict[str, Any]] = []
    for index, message in enumerate(source):
        role = message.get("role")
        meta = {k: v for k, v in message.items() if k.startswith("_")}
        if role == "assistant":
            blocks = _blocks_of(message.get("content"))
            for position, call in enumerate(message.get("tool_calls") or ()):
                fn = call.get("function") or {}
                blocks.append({"type": "tool_use", "id": new_ids[(index, position)],
                               "name": fn.get("name", ""),
                               "input": _input_of(fn.get("arguments"), notes)})
            out.append({"role": "assistant", "content": blocks, **meta})
        elif role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": renamed.get(index, str(message.get("tool_call_id") or "")),
                "content": message.get("content") if isinstance(message.get("content"), str)
                else _blocks_of(message.get("content")),
            }
            if message.get("_is_error"):
                block["is_error"] = True
            rest = {k: v for k, v in meta.items() if k != "_is_error"}
            if not rest and out and out[-1].get("_results_only"):
                # Results of one turn's parallel calls go in one user message: the Messages
                # API takes a call's result only in the message right after the call.
                out[-1]["content"].append(block)
                continue
            out.append({"role": "user", "content": [block], **rest, "_results_only": not rest})
        elif role == "user":
            out.append({"role": "user", "content": message.get("content")
                        if isinstance(message.get("content"), str)
                        else _blocks_of(message.get("content")), **meta})
        else:  # a system or developer message mid-conversation: Anthropic has no such role
            notes.relabelled(f"{role}_message_to_user")
            out.append({"role": "user", "content": _blocks_of(message.get("content")),
                        "_injected": f"{role}-message", **meta})
    for message in out:
        message.pop("_results_only", None)
    body: dict[str, Any] = {}
    if transcript.model:
        body["model"] = transcript.model
    if transcript.system_prompt is not None:
        body["system"] = transcript.system_prompt
    if transcript.tools:
        body["tools"] = [_tool_to_anthropic(t) for t in transcript.tools]
    body["messages"] = out
    return body


def write(transcript: Transcript, notes: ReportBuilder) -> str:
    return dumps(to_anthropic(transcript, notes))


FORMAT = TranscriptFormat(
    name=NAME,
    description="Anthropic Messages: a request body or a list of messages with content blocks",
    versions="Messages API shape (blocks up to thinking/redacted_thinking)",
    detect=detect,
    read=read,
    write=write,
)

"""What several readers share: the prologue of ``detect``/``read`` (the source kind a reader
takes, a document's list, JSON-object lines), Anthropic content blocks to OpenAI messages, and
marking text a user did not type (by the openings the compressor knows: ``_common.injected``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from hermes_core.plugin import (
    ROLES,
    Detection,
    ReportBuilder,
    Transcript,
    TranscriptSource,
    content_text,
    image_placeholder,
    make_tool_call,
)
from hermes_plugins._common.injected import (
    INJECTED_OPENINGS,
    SUMMARY_OPENINGS,
    opening_injected_kind,
    opening_summary_author,
)

Detect = Callable[[TranscriptSource], Detection]

#: ``isinstance(value, MAPPING)`` in the per-record paths: parsed JSON objects are dicts, and a
#: dict is checked first, in C; only what is not one reaches the ``Mapping`` ABC (a Python-level
#: hook, several times the cost). The answer is ``isinstance(value, Mapping)``'s.
MAPPING = (dict, Mapping)

#: How a refusal names each source kind a reader may require.
_KIND_NAMES = {
    "json": "one JSON document", "jsonl": "JSON Lines", "text": "Markdown text", "sqlite": "an SQLite database",
    "directory": "a folder",
}

def reads(kind: str) -> Callable[[Detect], Detect]:
    """Decorate a reader's ``detect``: a source of another kind is refused, naming both."""
    expected = _KIND_NAMES[kind]

    def decorate(detect: Detect) -> Detect:
        @functools.wraps(detect)
        def checked(source: TranscriptSource) -> Detection:
            if source.kind != kind:
                return Detection.refuse(f"not {expected} ({source.kind})")
            return detect(source)

        return checked

    return decorate


def head_objects(source: TranscriptSource) -> list[Mapping[str, Any]]:
    """The JSON objects among a JSON Lines source's first records (what ``detect`` looks at)."""
    return [r for r in source.head_records if isinstance(r, Mapping)]


def object_records(source: TranscriptSource) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """``source.records()`` less the lines that are not JSON objects (dropped and counted)."""
    for lineno, record in source.records():
        if isinstance(record, MAPPING):
            yield lineno, record
        else:
            source.report.dropped("not_an_object")


def with_list(doc: Any, key: str) -> Mapping[str, Any] | None:
    """``doc`` when it is an object whose ``key`` is a list, else ``None``."""
    return doc if isinstance(doc, Mapping) and isinstance(doc.get(key), list) else None


def document_list(source: TranscriptSource, key: str, missing: str = "") -> tuple[Mapping[str, Any], list[Any]]:
    """The document and its ``key`` list (counted as seen); ``TypeError`` (``missing``) without."""
    doc = with_list(source.document(), key)
    if doc is None:
        raise TypeError(missing or f"'{key}' must be a list")
    items: list[Any] = doc[key]
    source.report.saw(len(items))
    return doc, items


def run_transcript(
    source: TranscriptSource, report: ReportBuilder, messages: list[dict[str, Any]], **fields: Any
) -> Transcript:
    """The transcript of one run of a file holding many, its own report kept beside it."""
    transcript = source.transcript(messages, **fields)
    if report is not source.report:
        source.run_reports[id(transcript)] = report
    return transcript


def tag(value: Any) -> str | None:
    """``value`` when it is a string (a ``type`` or ``role`` field), else ``None``: foreign files
    put anything there, and a list or object cannot be looked up in a set of known names."""
    return value if isinstance(value, str) else None


def listed(value: Any) -> list[Any]:
    """``value`` when it is a list, else an empty one (a list field of a foreign file may hold anything)."""
    return value if isinstance(value, list) else []


def mapping(value: Any) -> Mapping[str, Any]:
    """``value`` when it is a mapping, else an empty one (fields of foreign files vary)."""
    return value if isinstance(value, MAPPING) else {}


#: Every opening ``mark_user_text`` looks for: text that starts with none of them (most requests)
#: is left as it is after one ``startswith`` call instead of one per opening.
_MARKED_OPENINGS = tuple(opening for opening, _kind in (*SUMMARY_OPENINGS, *INJECTED_OPENINGS))


def mark_user_text(message: dict[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """Mark a user message as an earlier summary or an injection when its text says so."""
    text = content_text(message.get("content"))
    if not text.lstrip().startswith(_MARKED_OPENINGS):
        return message
    who = opening_summary_author(text)
    if who is not None:
        message["_summary"] = who
        report.relabelled(f"marked_summary:{who}")
        return message
    kind = opening_injected_kind(text)
    if kind is not None:
        message["_injected"] = kind
        report.relabelled(f"marked_injected:{kind}")
    return message


def simplify_parts(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    """One text part becomes a plain string; otherwise the parts list stays."""
    if not parts:
        return ""
    if len(parts) == 1 and parts[0].get("type") == "text":
        return str(parts[0].get("text") or "")
    return parts


def result_content(content: Any, report: ReportBuilder) -> str | list[dict[str, Any]]:
    """An Anthropic ``tool_result`` content (string or blocks) as OpenAI tool content."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        content = [content]
    if not isinstance(content, list):
        return json.dumps(content, ensure_ascii=False)
    parts: list[dict[str, Any]] = []
    for block in content:
        if not isinstance(block, Mapping):
            parts.append({"type": "text", "text": str(block)})
        elif block.get("type") == "text":
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif block.get("type") in ("image", "image_url", "input_image"):
            parts.append(image_placeholder(block, report))
        else:
            parts.append(other_block(block, report))
    if all(p.get("type") == "text" for p in parts):
        return "\n".join(str(p["text"]) for p in parts)
    return parts


def other_block(block: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """A content block OpenAI has no place for, kept as text that names it (counted)."""
    kind = str(block.get("type") or "unknown")
    report.changed(f"blocks_kept_as_text:{kind}")
    if kind == "document":
        source = block.get("source") if isinstance(block.get("source"), Mapping) else {}
        media = source.get("media_type", "document") if isinstance(source, Mapping) else "document"
        title = block.get("title") or ""
        return {"type": "text", "text": f"[document omitted: {media}{', ' + str(title) if title else ''}]"}
    body = json.dumps(_readable_payload(block), ensure_ascii=False, default=str)
    return {"type": "text", "text": f"[{kind} block] {body}"}


#: Keys whose value is opaque to a reader (a search page the provider encrypted, base64
#: bytes): written as their size, not as text that would cost tokens and mean nothing.
_OPAQUE_KEYS = frozenset({"encrypted_content", "encrypted_index", "signature"})


def _readable_payload(block: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``block`` with its opaque strings (``_OPAQUE_KEYS``, the ``data`` of a base64
    source) replaced by their size; walked iteratively (the depth was checked on reading)."""
    out = dict(block)
    stack: list[dict[str, Any]] = [out]
    while stack:
        node = stack.pop()
        for key, value in node.items():
            opaque = key in _OPAQUE_KEYS or (key == "data" and node.get("type") == "base64")
            if opaque and isinstance(value, str):
                node[key] = f"<{len(value):,} characters omitted>"
            elif isinstance(value, Mapping):
                node[key] = dict(value)
                stack.append(node[key])
            elif isinstance(value, list):
                node[key] = [dict(v) if isinstance(v, Mapping) else v for v in value]
                stack.extend(v for v in node[key] if isinstance(v, dict))
    return out


def assistant_from_blocks(blocks: Sequence[Any], report: ReportBuilder) -> dict[str, Any]:
    """One Anthropic assistant message's blocks as an OpenAI assistant message."""
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
            continue
        if not isinstance(block, Mapping):
            continue
        kind = tag(block.get("type"))
        if kind == "text":
            parts.append({"type": "text", "text": str(block.get("text") or "")})
        elif kind == "tool_use":  # (a server_tool_use ran on the provider, its result beside it)
            calls.append(make_tool_call(str(block.get("id") or ""), str(block.get("name") or ""),
                                        block.get("input")))
        elif kind == "thinking":
            text = str(block.get("thinking") or "")
            if text:
                reasoning.append(text)
                report.changed("reasoning_kept_as_metadata")
            if block.get("signature"):
                report.changed("thinking_signatures_dropped")
        elif kind == "redacted_thinking":
            report.changed("encrypted_reasoning_dropped")
        elif kind in ("image", "image_url"):
            parts.append(image_placeholder(block, report))
        elif kind in CALL_BLOCKS:  # a non-standard call block (a chat export's): its meaning is clear
            calls.append(call_from_block(block, report))
        else:
            parts.append(other_block(block, report))
    message: dict[str, Any] = {"role": "assistant", "content": simplify_parts(parts) if parts else ""}
    if calls:
        message["tool_calls"] = calls
        if not parts:
            message["content"] = None
    if reasoning:
        message["_reasoning"] = "\n\n".join(reasoning)
    return message


def user_from_blocks(content: Any, report: ReportBuilder) -> list[dict[str, Any]]:
    """One Anthropic user message as OpenAI messages: each ``tool_result`` a ``tool`` message
    (``is_error`` kept as ``_is_error``), the rest one user message after them; text an agent
    injected (``<system-reminder>`` ...) becomes its own user message marked ``_injected``."""
    if isinstance(content, str):
        return [mark_user_text({"role": "user", "content": content}, report)]
    if not isinstance(content, list):
        return [{"role": "user", "content": "" if content is None else str(content)}]
    out: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    injected: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, str):
            block = {"type": "text", "text": block}
        if not isinstance(block, Mapping):
            continue
        kind = tag(block.get("type"))
        if kind == "tool_result":
            result: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": str(block.get("tool_use_id") or ""),
                "content": result_content(block.get("content"), report),
            }
            if block.get("is_error"):
                result["_is_error"] = True
            out.append(result)
        elif kind in OUTPUT_BLOCKS:  # a non-standard result block: a tool result all the same
            out.append(result_from_block(block, report))
        elif kind == "text":
            text = str(block.get("text") or "")
            if (opening_injected_kind(text) or opening_summary_author(text)) and (parts or len(content) > 1):
                injected.append(mark_user_text({"role": "user", "content": text}, report))
                report.changed("injected_text_split_from_user_message")
            else:
                parts.append({"type": "text", "text": text})
        elif kind in ("image", "image_url"):
            parts.append(image_placeholder(block, report))
        else:
            parts.append(other_block(block, report))
    if parts:
        out.append(mark_user_text({"role": "user", "content": simplify_parts(parts)}, report))
    out.extend(injected)
    return out


def is_openai_message(item: Any) -> bool:
    return isinstance(item, Mapping) and isinstance(item.get("role"), str) and item["role"] in ROLES


def has_anthropic_blocks(messages: Sequence[Any]) -> bool:
    for message in messages[:200]:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, Mapping) and block.get("type") in (
                    "tool_use", "tool_result", "thinking", "redacted_thinking"
                ) or (isinstance(block, Mapping) and block.get("type") == "image" and "source" in block):
                    return True
    return False


# --- tolerant reading (issue 30) ----------------------------------------------------------------


def unknown_role_message(item: Mapping[str, Any], role: str, report: ReportBuilder) -> dict[str, Any] | None:
    """A message whose role no provider knows (mini-swe-agent's ``exit``, a tool's own roles),
    kept as user text marked ``_injected: "unknown-role"`` with the role under ``_role``, and
    counted; ``None`` (a counted drop) when it carries no text."""
    text = content_text(item.get("content")) if item.get("content") is not None else ""
    if not text.strip():
        report.dropped(f"unknown_role_without_text:{role}")
        return None
    report.relabelled(f"unknown_role_to_user:{role}")
    report.converted()
    return {"role": "user", "content": text, "_injected": "unknown-role", "_role": role}


#: Keys non-standard ``tool_call`` / ``tool_output`` content blocks use for each field.
_CALL_ID_KEYS = ("call_id", "tool_call_id", "id", "tool_use_id")
_CALL_NAME_KEYS = ("name", "tool_name", "function_name")
_CALL_ARG_KEYS = ("arguments", "input", "args", "parameters")
_OUTPUT_KEYS = ("output", "content", "result", "text")
#: Non-standard block types whose meaning is clear: a call the model made, a result it was given.
CALL_BLOCKS = frozenset({"tool_call", "function_call", "toolCall"})
OUTPUT_BLOCKS = frozenset({"tool_output", "tool_call_output", "function_call_output", "toolResult"})


def _first(block: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if block.get(key) is not None:
            return block[key]
    return None


def call_from_block(block: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """A non-standard ``tool_call`` content block as an OpenAI tool call (counted)."""
    fn = mapping(block.get("function"))
    name = _first(block, _CALL_NAME_KEYS) or fn.get("name") or ""
    args = _first(block, _CALL_ARG_KEYS)
    if args is None:
        args = fn.get("arguments")
    report.changed(f"nonstandard_blocks_mapped:{block.get('type')}")
    return make_tool_call(str(_first(block, _CALL_ID_KEYS) or ""), str(name), args)


def result_from_block(block: Mapping[str, Any], report: ReportBuilder) -> dict[str, Any]:
    """A non-standard ``tool_output`` content block as an OpenAI tool message (counted)."""
    output = _first(block, _OUTPUT_KEYS)
    content = output if isinstance(output, str) else result_content(output, report)
    result: dict[str, Any] = {"role": "tool", "tool_call_id": str(_first(block, _CALL_ID_KEYS) or ""),
                              "content": content}
    if block.get("is_error") or block.get("status") in ("error", "failed") or block.get("error"):
        result["_is_error"] = True
    report.changed(f"nonstandard_blocks_mapped:{block.get('type')}")
    return result

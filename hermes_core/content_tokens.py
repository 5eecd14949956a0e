"""Rough token estimates of any message content shape, per part kind.

Counting a list of parts by its JSON length would price a 200 kB base64 screenshot at 50k tokens
(providers: about 1,600), so every pass that limits, spills, dedupes, prunes or fits content of
any shape (OpenAI Chat parts, Anthropic blocks, Responses parts) uses ``content_tokens``. The
rule per kind: docs/message-model.md, "Token estimates of any shape". Estimates, never counts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_core.conversion import ANTHROPIC_CONTENT
from hermes_core.messages import tool_call_fields
from hermes_core.server_blocks import SERVER_RESULTS

__all__ = [
    "AUDIO_BYTES_PER_TOKEN",
    "DOCUMENT_REFERENCE_TOKENS",
    "IMAGE_TOKENS",
    "PART_OVERHEAD_TOKENS",
    "content_tokens",
    "message_content_tokens",
    "part_tokens",
]

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1_600
AUDIO_BYTES_PER_TOKEN = 2_000
AUDIO_MIN_TOKENS = 50
DOCUMENT_REFERENCE_TOKENS = 1_500
PART_OVERHEAD_TOKENS = 3
#: How many items the walk over an unknown part visits at most (its strings beyond that are
#: not counted: a pathological part is estimated low rather than walked for ever).
WALK_LIMIT = 100_000


def _text(n: int) -> int:
    return (n + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _b64_bytes(data: Any) -> int:
    if not isinstance(data, str):
        return 0
    if data.startswith("data:"):
        data = data.partition(",")[2]
    return max(0, len(data) * 3 // 4)


def _strings_length(value: Any) -> int:
    """Characters of every string in ``value`` (keys included), walked without recursion."""
    total = 0
    stack = [value]
    visited = 0
    while stack and visited < WALK_LIMIT:
        item = stack.pop()
        visited += 1
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                if isinstance(key, str):
                    total += len(key)
                stack.append(inner)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is not None:
            total += len(str(item)) if isinstance(item, (int, float, bool)) else 0
    return total


def _source_tokens(source: Any) -> int:
    if not isinstance(source, Mapping):
        return DOCUMENT_REFERENCE_TOKENS
    kind = source.get("type")
    if kind == "text":
        data = source.get("data")
        return _text(len(data)) if isinstance(data, str) else 0
    if kind == "content":
        return content_tokens(source.get("content"))
    if kind == "base64":
        return _text(_b64_bytes(source.get("data")))
    return DOCUMENT_REFERENCE_TOKENS


def part_tokens(part: Any) -> int:
    """Rough tokens of one content part or block (rules per kind: docs/message-model.md), overhead included."""
    if isinstance(part, str):
        return _text(len(part))
    if not isinstance(part, Mapping):
        return PART_OVERHEAD_TOKENS
    kind = part.get("type")
    kind = kind if type(kind) is str else None  # a malformed type (a list) counts by its strings
    if kind in ("text", "input_text", "output_text", None) and isinstance(part.get("text"), str):
        return _text(len(part["text"])) + PART_OVERHEAD_TOKENS
    if kind == "refusal":
        refusal = part.get("refusal")
        return _text(len(refusal) if isinstance(refusal, str) else 0) + PART_OVERHEAD_TOKENS
    if kind in ("image_url", "input_image", "image"):
        return IMAGE_TOKENS
    if kind == "input_audio":
        audio = part.get("input_audio")
        data = audio.get("data") if isinstance(audio, Mapping) else None
        return max(AUDIO_MIN_TOKENS, _b64_bytes(data) // AUDIO_BYTES_PER_TOKEN)
    if kind in ("file", "input_file"):
        file = part.get("file") if kind == "file" else part
        data = file.get("file_data") if isinstance(file, Mapping) else None
        if isinstance(data, str) and data:
            return _text(_b64_bytes(data)) + PART_OVERHEAD_TOKENS
        return DOCUMENT_REFERENCE_TOKENS
    if kind == "document":  # its title and context reach the model beside the source
        head = _strings_length([part.get("title"), part.get("context")])
        return _source_tokens(part.get("source")) + _text(head) + PART_OVERHEAD_TOKENS
    if kind == "search_result":
        head = len(str(part.get("title") or "")) + len(str(part.get("source") or ""))
        return _text(head) + content_tokens(part.get("content")) + PART_OVERHEAD_TOKENS
    return _tool_block_tokens(kind, part)


def _tool_block_tokens(kind: Any, part: Mapping[str, Any]) -> int:
    """``part_tokens`` of a call, a result or thinking (any other block: its strings)."""
    if kind in ("tool_result", "mcp_tool_result"):
        return content_tokens(part.get("content")) + PART_OVERHEAD_TOKENS * 3
    if kind in SERVER_RESULTS:
        return _server_result_tokens(part.get("content")) + PART_OVERHEAD_TOKENS * 3
    if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
        value = part.get("input")
        size = _strings_length(value) if not isinstance(value, str) else len(value)
        return _text(size + len(str(part.get("name") or ""))) + PART_OVERHEAD_TOKENS * 3
    if kind == "thinking":
        text = part.get("thinking")
        return _text(len(text) if isinstance(text, str) else 0) + PART_OVERHEAD_TOKENS
    if kind == "redacted_thinking":  # encrypted thinking, as base64: priced as what it hides
        return _text(_b64_bytes(part.get("data"))) + PART_OVERHEAD_TOKENS
    if kind == "compaction":  # the provider's summary, and its opaque metadata by decoded size
        summary = part.get("content")
        size = (len(summary) if isinstance(summary, str) else 0) + _b64_bytes(part.get("encrypted_content"))
        return _text(size) + PART_OVERHEAD_TOKENS
    return _text(_strings_length(part)) + PART_OVERHEAD_TOKENS


def _server_result_tokens(content: Any) -> int:
    """A server tool's result: a web search's pages by the decoded size of their encrypted
    content (base64; the provider bills the pages it hides), a fetched page as the document
    it holds, anything else (a command's output, an error code) by its strings."""
    if isinstance(content, list):
        total = 0
        for result in content:
            if isinstance(result, Mapping) and isinstance(result.get("encrypted_content"), str):
                rest = [v for k, v in result.items() if k != "encrypted_content"]
                total += _text(_b64_bytes(result["encrypted_content"]) + _strings_length(rest))
            else:
                total += _text(_strings_length(result))
        return total
    if isinstance(content, Mapping) and isinstance(content.get("content"), Mapping):
        rest = [v for k, v in content.items() if k != "content"]  # web fetch: url, retrieved_at
        return part_tokens(content["content"]) + _text(_strings_length(rest))
    return _text(_strings_length(content))


def content_tokens(content: Any) -> int:
    """Rough tokens of a message ``content`` of any shape: a string, ``None``, one part, or a
    list of parts in any provider's shape (see the module docstring)."""
    if content is None:
        return 0
    if isinstance(content, str):
        return _text(len(content))
    if isinstance(content, list):
        total = 0
        for part in content:
            total += part_tokens(part)
        return total
    if isinstance(content, Mapping):
        return part_tokens(content)
    return _text(len(str(content))) if isinstance(content, (int, float)) else 0


def message_content_tokens(message: Mapping[str, Any]) -> int:
    """Rough tokens of what a message puts on the wire beyond its role: its content, its tool
    calls' names and arguments, a refusal, and the original Anthropic blocks it keeps
    (``_anthropic_content``: thinking goes back to Anthropic, so it counts) in place of its
    readable text."""
    blocks = message.get(ANTHROPIC_CONTENT)
    if isinstance(blocks, list):
        return content_tokens(blocks)
    total = content_tokens(message.get("content"))
    refusal = message.get("refusal")
    if isinstance(refusal, str):
        total += _text(len(refusal))
    audio = message.get("audio")  # an audio reply goes back by id: its words, when kept, or the least audio
    if isinstance(audio, Mapping):
        transcript = audio.get("transcript")
        total += _text(len(transcript)) if isinstance(transcript, str) and transcript else AUDIO_MIN_TOKENS
    for call in message.get("tool_calls") or ():
        if isinstance(call, Mapping) and (isinstance(call.get("function"), Mapping) or call.get("type") == "custom"):
            _kind, name, args = tool_call_fields(call)  # a custom call's input counts as its arguments
            size = len(args) if isinstance(args, str) else len(json.dumps(args, default=str)) if (
                isinstance(args, (int, float, bool)) or args is None) else _strings_length(args)
            total += _text(size + len(name)) + PART_OVERHEAD_TOKENS * 3
    return total

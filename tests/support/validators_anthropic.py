"""A validator for Anthropic Messages API requests, written from Anthropic's documented rules.

Not a test file: tests import ``problems`` / ``check`` and assert on what a request builder or
the fake server received. Rules (docs.anthropic.com: Messages API, tool use, extended
thinking, prompt caching, vision, PDF support, search results):

* ``model`` a string, ``max_tokens`` a positive integer, ``messages`` a non-empty list;
  ``system`` a string or a list of non-empty ``text`` blocks.
* Every message has role ``user`` or ``assistant`` and a non-empty content (a non-empty string
  or a non-empty list of blocks); text blocks hold text that is not whitespace alone ("text
  content blocks must contain non-whitespace text"). Roles alternate (the API
  would combine consecutive turns of one role into one; a request builder sends them as one).
* Block types per role: user - text, image, document, search_result, tool_result,
  container_upload; assistant - text, thinking, redacted_thinking, tool_use and the server-tool
  blocks. No OpenAI part type (``image_url``, ``input_audio``, ``file``, ``refusal``) anywhere.
* Images: a ``base64`` source with a media type of jpeg/png/gif/webp and data, a ``url`` source
  with a URL, or a ``file`` source. Documents: base64 PDF, text, content, url or file sources.
* ``tool_use``: a unique id matching ``^[a-zA-Z0-9_-]+$``, a name, an object ``input``. The
  message right after an assistant message with tool_use blocks is a user message whose
  content begins with one ``tool_result`` per tool_use id (results first, then other blocks);
  a ``tool_result`` answers a tool_use of the message right before it; ``is_error`` is a bool;
  its content a string or a list of text/image/document/search_result blocks.
* Thinking: a ``thinking`` block has a ``thinking`` string and a non-empty ``signature``; a
  ``redacted_thinking`` block a ``data`` string. With thinking enabled (``thinking=True``),
  every assistant message of the tool loop in progress (after the last user message that is
  not only tool results) starts with a thinking or redacted_thinking block.
* Server tools: a result block (``web_search_tool_result``, ``mcp_tool_result`` ...) follows its
  ``server_tool_use`` / ``mcp_tool_use`` in the same assistant message; a call without a result
  only at the end of the last message (a paused turn the request continues).
* Cache control: at most four ``cache_control`` markers in tools, system and messages; never on
  a thinking or redacted_thinking block.
* No key starting with ``_`` (hermes-core's metadata) anywhere in a message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

USER_BLOCKS = frozenset({"text", "image", "document", "search_result", "tool_result", "container_upload"})
ASSISTANT_BLOCKS = frozenset({
    "text", "thinking", "redacted_thinking", "tool_use", "server_tool_use",
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "mcp_tool_use", "mcp_tool_result", "compaction",
})
TOOL_RESULT_BLOCKS = frozenset({"text", "image", "document", "search_result"})
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
MAX_BREAKPOINTS = 4


def _underscore_keys(value: Any, where: str, out: list[str]) -> None:
    stack = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, Mapping):
            for key, inner in item.items():
                if isinstance(key, str) and key.startswith("_"):
                    out.append(f"{at}: metadata key {key!r} on the wire")
                stack.append((inner, f"{at}.{key}"))
        elif isinstance(item, list):
            stack.extend((inner, f"{at}[{i}]") for i, inner in enumerate(item))


def _markers(value: Any) -> int:
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            count += "cache_control" in item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _check_image(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    source = block.get("source")
    if not isinstance(source, Mapping):
        out.append(f"{at}: image without a source")
        return
    kind = source.get("type")
    if kind == "base64":
        if source.get("media_type") not in IMAGE_TYPES:
            out.append(f"{at}: image media_type {source.get('media_type')!r} not supported")
        if not isinstance(source.get("data"), str) or not source["data"]:
            out.append(f"{at}: base64 image without data")
    elif kind == "url":
        if not isinstance(source.get("url"), str) or not source["url"].startswith(("http://", "https://")):
            out.append(f"{at}: url image without an http(s) url")
    elif kind != "file":
        out.append(f"{at}: image source type {kind!r}")


def _check_document(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    source = block.get("source")
    kind = source.get("type") if isinstance(source, Mapping) else None
    if kind == "base64":
        if source.get("media_type") != "application/pdf" or not source.get("data"):  # type: ignore[union-attr]
            out.append(f"{at}: base64 document must be a PDF with data")
    elif kind == "text":
        if not isinstance(source.get("data"), str):  # type: ignore[union-attr]
            out.append(f"{at}: text document without data")
    elif kind not in ("content", "url", "file"):
        out.append(f"{at}: document source type {kind!r}")


def _check_text(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if not isinstance(block.get("text"), str) or not block["text"].strip():
        out.append(f"{at}: empty or whitespace-only text block")


def _check_search_result(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if not all(isinstance(block.get(k), str) for k in ("source", "title")) or not isinstance(
            block.get("content"), list):
        out.append(f"{at}: search_result needs source, title and content")


def _check_thinking(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if not isinstance(block.get("thinking"), str) or not block.get("signature"):
        out.append(f"{at}: thinking block without its signature")
    if "cache_control" in block:
        out.append(f"{at}: cache_control on a thinking block")


def _check_redacted_thinking(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if not isinstance(block.get("data"), str) or not block["data"]:
        out.append(f"{at}: redacted_thinking without data")
    if "cache_control" in block:
        out.append(f"{at}: cache_control on a redacted_thinking block")


def _check_tool_use(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if not isinstance(block.get("id"), str) or not TOOL_ID.match(block["id"]):
        out.append(f"{at}: tool_use id {block.get('id')!r} invalid")
    if not isinstance(block.get("name"), str) or not block["name"]:
        out.append(f"{at}: tool_use without a name")
    if not isinstance(block.get("input"), Mapping):
        out.append(f"{at}: tool_use input must be an object")


def _check_tool_result(block: Mapping[str, Any], at: str, out: list[str]) -> None:
    if "is_error" in block and not isinstance(block["is_error"], bool):
        out.append(f"{at}: is_error must be a bool")
    content = block.get("content")
    if isinstance(content, list):
        for j, inner in enumerate(content):
            _check_block(inner, "user", f"{at}.content[{j}]", out, in_result=True)
    elif content is not None and not isinstance(content, str):
        out.append(f"{at}: tool_result content must be a string or a list")


#: The rules of each block type beyond being allowed where it stands (others: none checked).
_BLOCK_CHECKS = {
    "text": _check_text,
    "image": _check_image,
    "document": _check_document,
    "search_result": _check_search_result,
    "thinking": _check_thinking,
    "redacted_thinking": _check_redacted_thinking,
    "tool_use": _check_tool_use,
    "tool_result": _check_tool_result,
}


def _check_block(block: Any, role: str, at: str, out: list[str], *, in_result: bool = False) -> None:
    if not isinstance(block, Mapping):
        out.append(f"{at}: a block must be an object")
        return
    kind = block.get("type")
    allowed = TOOL_RESULT_BLOCKS if in_result else (USER_BLOCKS if role == "user" else ASSISTANT_BLOCKS)
    if kind not in allowed:
        out.append(f"{at}: block type {kind!r} not allowed in {'a tool_result' if in_result else role}")
        return
    checker = _BLOCK_CHECKS.get(kind)
    if checker is not None:
        checker(block, at, out)


def _request_fields(request: Mapping[str, Any], out: list[str]) -> None:
    if not isinstance(request.get("model"), str) or not request["model"]:
        out.append("model missing")
    if not isinstance(request.get("max_tokens"), int) or request["max_tokens"] <= 0:
        out.append("max_tokens missing")
    system = request.get("system")
    if system is not None and not isinstance(system, str):
        if not isinstance(system, list) or not all(
                isinstance(b, Mapping) and b.get("type") == "text" and b.get("text") for b in system):
            out.append("system must be a string or non-empty text blocks")


def problems(request: Mapping[str, Any], *, thinking: bool = False) -> list[str]:
    """Every rule ``request`` (keyword arguments of ``messages.create``) breaks, as lines."""
    out: list[str] = []
    _request_fields(request, out)
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*out, "messages must be a non-empty list"]
    if _markers(request.get("tools")) + _markers(request.get("system")) + _markers(messages) > MAX_BREAKPOINTS:
        out.append("more than four cache_control markers")
    _underscore_keys(messages, "messages", out)
    seen_ids: set[str] = set()
    for i, message in enumerate(messages):
        at = f"messages[{i}]"
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in ("user", "assistant"):
            out.append(f"{at}: role {role!r}")
            continue
        if i and isinstance(messages[i - 1], Mapping) and messages[i - 1].get("role") == role:
            out.append(f"{at}: two {role} messages in a row (roles must alternate)")
        blocks = _blocks(message.get("content"), at, out)
        if blocks is None:
            continue
        for j, block in enumerate(blocks):
            _check_block(block, role, f"{at}.content[{j}]", out)
        uses = [b.get("id") for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        for ident in uses:
            if ident in seen_ids:
                out.append(f"{at}: tool_use id {ident!r} used twice")
            seen_ids.add(ident)
        _check_results(messages, i, blocks, out)
        if role == "assistant":
            _check_server_pairs(blocks, at, out, last=i == len(messages) - 1)
        if uses and i + 1 < len(messages):  # the last message: the model's own pending turn
            _check_answered(uses, messages[i + 1], at, out)
    if thinking:
        out.extend(_thinking_placement(messages))
    return out


def _blocks(content: Any, at: str, out: list[str]) -> list[Any] | None:
    """The blocks of a message's content (none for a string); ``None`` when it is neither."""
    if isinstance(content, str):
        if not content:
            out.append(f"{at}: empty content")
        return []
    if isinstance(content, list) and content:
        return content
    out.append(f"{at}: content must be a non-empty string or list")
    return None


def _check_results(messages: list[Any], i: int, blocks: list[Any], out: list[str]) -> None:
    """The tool_result blocks of ``messages[i]`` answer tool_use blocks of the message right
    before it and come first."""
    at = f"messages[{i}]"
    results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    if not results:
        return
    previous = messages[i - 1] if i else None
    prev_uses = [b.get("id") for b in (previous or {}).get("content") or ()
                 if isinstance(b, Mapping) and b.get("type") == "tool_use"] if (
        isinstance(previous, Mapping) and previous.get("role") == "assistant"
        and isinstance(previous.get("content"), list)) else []
    for block in results:
        if block.get("tool_use_id") not in prev_uses:
            out.append(f"{at}: tool_result {block.get('tool_use_id')!r} answers no tool_use "
                       "of the message right before")
    first_other = next((k for k, b in enumerate(blocks)
                        if not (isinstance(b, Mapping) and b.get("type") == "tool_result")), len(blocks))
    if any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in blocks[first_other:]):
        out.append(f"{at}: tool_result blocks must come first")


#: Server-side calls and their results, which live in the assistant message of the call.
SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
SERVER_RESULTS = ASSISTANT_BLOCKS - SERVER_CALLS - {"text", "thinking", "redacted_thinking", "tool_use", "compaction"}


def _check_server_pairs(blocks: list[Any], at: str, out: list[str], *, last: bool) -> None:
    """A server tool's result follows its call in the same assistant message; a call without a
    result only ends the last message (a turn the API paused, ``pause_turn``)."""
    calls: list[Any] = []
    answered: set[Any] = set()
    for j, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind in SERVER_CALLS:
            calls.append((j, block.get("id")))
        elif kind in SERVER_RESULTS:
            if block.get("tool_use_id") not in {ident for _, ident in calls}:
                out.append(f"{at}.content[{j}]: {kind} without its call earlier in the message")
            answered.add(block.get("tool_use_id"))
    pending = [(j, ident) for j, ident in calls if ident not in answered]
    trailing = last and all(j >= len(blocks) - len(pending) for j, _ in pending)
    if pending and not trailing:
        out.append(f"{at}: server calls {[i for _, i in pending]} without a result in the message")


def _check_answered(uses: list[Any], nxt: Any, at: str, out: list[str]) -> None:
    """Every tool_use id of the message at ``at`` has a tool_result in ``nxt``, the message after."""
    answered = [b.get("tool_use_id") for b in nxt.get("content") or ()
                if isinstance(b, Mapping) and b.get("type") == "tool_result"] if (
        nxt.get("role") == "user" and isinstance(nxt.get("content"), list)) else []
    missing = [u for u in uses if u not in answered]
    if missing:
        out.append(f"{at}: tool_use {missing} without a tool_result right after")


def _is_results_only(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)


def _thinking_placement(messages: list[Any]) -> list[str]:
    out = []
    start = 0
    for i, message in enumerate(messages):
        if message.get("role") == "user" and not _is_results_only(message):
            start = i + 1
    for i in range(start, len(messages)):
        message = messages[i]
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        first = content[0] if isinstance(content, list) and content else None
        if not (isinstance(first, Mapping) and first.get("type") in ("thinking", "redacted_thinking")):
            out.append(f"messages[{i}]: an assistant turn of the tool loop in progress must start "
                       "with a thinking block when thinking is enabled")
    return out


def check(request: Mapping[str, Any], *, thinking: bool = False) -> None:
    """Raise ``AssertionError`` listing every rule ``request`` breaks."""
    found = problems(request, thinking=thinking)
    assert not found, "invalid Anthropic request:\n" + "\n".join(found)

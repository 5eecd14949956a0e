"""What a placeholder says of an Anthropic server-tool, MCP or upload block in a request for
another API (``hermes_core.conversion``): the tool and its input for a call, the error or what
came back for a result, the file of an upload - never what is opaque (encrypted search pages).
Rules per block: docs/message-model.md, "Anthropic's server tools, MCP, citations and uploads".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hermes_core import bounded

__all__ = ["SERVER_RESULTS", "server_block_details"]

#: How much of a call's input a placeholder shows.
INPUT_SHOWN = 200
#: How many of a web search's result URLs a placeholder names.
URLS_SHOWN = 5


def _input_text(value: Any) -> str:
    """A server call's input as compact JSON, cut at ``INPUT_SHOWN`` characters (one nested
    deeper than ``bounded.MAX_DEPTH`` is measured first, never serialised)."""
    if bounded.value_depth(value) > bounded.MAX_DEPTH:
        return bounded.too_deep_note("tool input")
    try:
        text = value if isinstance(value, str) else json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    except ValueError:  # circular
        return "(input not JSON)"
    return text if len(text) <= INPUT_SHOWN else text[:INPUT_SHOWN - 1] + "\u2026"


def _result_details(content: Any) -> tuple[str, ...]:
    """What a server tool's result held: its error code, or its kind and sizes (results a
    server encrypted or keeps, such as search pages, are named by URL, never shown)."""
    if isinstance(content, list):  # web search: the results, by URL
        urls = [str(r.get("url") or "") for r in content if isinstance(r, Mapping)]
        more = len(urls) - URLS_SHOWN
        shown = ", ".join(urls[:URLS_SHOWN]) + (f", +{more} more" if more > 0 else "")
        return (f"{len(urls)} result{'s' * (len(urls) != 1)}", shown)
    if not isinstance(content, Mapping):
        return ()
    if content.get("error_code") is not None:
        return (f"error {content.get('error_code')}",)
    details = [str(content.get("type") or "")]
    if isinstance(content.get("url"), str):
        details.append(content["url"])
    if "return_code" in content:
        details.append(f"return code {content.get('return_code')}")
    for stream in ("stdout", "stderr"):
        if isinstance(content.get(stream), str) and content[stream]:
            details.append(f"{stream} {len(content[stream]):,} characters")
    refs = content.get("tool_references")
    if isinstance(refs, list):
        details.append("tools " + ", ".join(str(r.get("tool_name") or "") for r in refs
                                            if isinstance(r, Mapping)))
    return tuple(details)


#: Anthropic server-tool result blocks (in the assistant message of their call) whose content
#: the model reads on later turns: search pages (encrypted), a fetched document, a command's output.
SERVER_RESULTS = frozenset({
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
})


def _text_size(content: Any) -> int:
    """Characters of a string, or of the text blocks of a list."""
    if isinstance(content, str):
        return len(content)
    return sum(len(str(b.get("text") or "")) for b in content or () if isinstance(b, Mapping)) if (
        isinstance(content, list)) else 0


def _beta_details(block: Mapping[str, Any]) -> tuple[str, ...]:
    """Beta blocks: the advisor's result (its error, or its size: a redacted one is opaque), a
    fallback's models, a tool reference's tool, mid-conversation system text by its size."""
    kind = block.get("type")
    if kind == "advisor_tool_result":
        content = block.get("content")
        content = content if isinstance(content, Mapping) else {}
        if content.get("error_code") is not None:
            return (f"error {content.get('error_code')}",)
        return (str(content.get("type") or ""), f"{_text_size(content.get('text')):,} characters"
                if isinstance(content.get("text"), str) else "")
    if kind == "fallback":
        ends = [block.get(k) for k in ("from", "to")]
        models = [str(e.get("model") or "") if isinstance(e, Mapping) else "" for e in ends]
        return (f"from {models[0]} to {models[1]}",) if any(models) else ()
    if kind == "tool_reference":
        return (f"tool {block.get('tool_name')}",)
    if kind == "mid_conv_system":
        return (f"system text, {_text_size(block.get('content')):,} characters",)
    return ()


def server_block_details(block: Mapping[str, Any]) -> tuple[str, ...]:
    """The details a placeholder of a server-tool, MCP, upload or beta block gives (a type
    nobody documented yet: none, the placeholder names it)."""
    kind = block.get("type")
    if kind in ("server_tool_use", "mcp_tool_use"):
        server = block.get("server_name")
        name = str(block.get("name") or "")
        return (f"{name} on MCP server {server}" if server else name, _input_text(block.get("input")))
    if kind == "container_upload":
        return (f"file {block.get('file_id')}",)
    if kind == "mcp_tool_result":
        size = _text_size(block.get("content"))
        return ("error" if block.get("is_error") else "", f"{size:,} characters")
    if kind in SERVER_RESULTS:
        return _result_details(block.get("content"))
    return _beta_details(block)

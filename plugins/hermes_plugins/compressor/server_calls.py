"""Calls the model made through Anthropic's server tools and MCP connector, as the handoff
lists client calls: what was called, with what input, the outcome in one line.

They live in a kept reply's blocks (``_anthropic_content``), the call and its result in the same
assistant message (the result opens the next one when the API paused the turn); no
``tool_calls`` names them. Errors are errors: a ``*_tool_result_error`` by its code, a command
that exited non-zero, an MCP result flagged ``is_error``. Opaque data (encrypted search pages,
a fetched PDF) is named, never shown. Redaction and clipping are the caller's (``Facts``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = ["SERVER_CALLS", "ServerCall", "server_calls", "unanswered"]

#: Blocks that are a call the provider ran (its result is a block beside it).
SERVER_CALLS = frozenset({"server_tool_use", "mcp_tool_use"})
#: Input values shown per key, and results' URLs and text shown at most.
VALUE_MAX = 160
URLS_SHOWN = 3
TEXT_MAX = 160


class ServerCall(NamedTuple):
    """One server or MCP call read with its result (``error``: what failed, else ``None``)."""

    #: ``[web_search] query="..."``: the tool and its input, the key its outcome goes by.
    call: str
    #: What came back, in a few words; ``None`` when no result was recorded.
    outcome: str | None
    error: str | None


def _value(value: Any) -> str:
    """A top-level input value: a scalar as JSON, a structure by its kind (never walked: a
    model's input may nest arbitrarily deep)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= VALUE_MAX else text[:VALUE_MAX - 1] + "\u2026"
    return "[...]" if isinstance(value, list) else "{...}"


def _called(block: Mapping[str, Any]) -> str:
    name = str(block.get("name") or "unknown")
    server = block.get("server_name")
    head = f"[mcp {server}/{name}]" if server else f"[{name}]"
    given = block.get("input")
    if isinstance(given, Mapping):
        shown = " ".join(f"{k}={_value(v)}" for k, v in given.items())
    else:
        shown = _value(given) if given not in (None, "") else ""
    return f"{head} {shown}".rstrip()


def _first_line(text: Any) -> str:
    line = next((ln.strip() for ln in str(text or "").splitlines() if ln.strip()), "")
    return line if len(line) <= TEXT_MAX else line[:TEXT_MAX - 1] + "\u2026"


def _mcp_outcome(block: Mapping[str, Any]) -> tuple[str, str | None]:
    content = block.get("content")
    texts = content if isinstance(content, str) else "\n".join(
        str(b.get("text") or "") for b in content or () if isinstance(b, Mapping))
    lines = sum(1 for ln in texts.splitlines() if ln.strip())
    said = (_first_line(texts) + (f" (+{lines - 1} more lines)" if lines > 1 else "")) or "(empty result)"
    return said, said if block.get("is_error") else None


def _outcome(block: Mapping[str, Any]) -> tuple[str, str | None]:
    """(what came back, the error if it failed) of a server tool's result block."""
    if block.get("type") == "mcp_tool_result":
        return _mcp_outcome(block)
    content = block.get("content")
    if isinstance(content, list):  # a web search: its results by URL (the pages are encrypted)
        urls = [str(r.get("url") or "") for r in content if isinstance(r, Mapping)]
        more = f", +{len(urls) - URLS_SHOWN} more" if len(urls) > URLS_SHOWN else ""
        return f"{len(urls)} result{'s' * (len(urls) != 1)}" + (
            f": {', '.join(urls[:URLS_SHOWN])}{more}" if urls else ""), None
    if not isinstance(content, Mapping):
        return "done", None
    kind = str(content.get("type") or block.get("type") or "")
    if content.get("error_code") is not None:
        error = f"{kind}: {content.get('error_code')}"
        return error, error
    if isinstance(content.get("url"), str):  # a web fetch: what it fetched
        return f"fetched {content['url']}", None
    if "return_code" in content:  # code execution: exit code, first line of output
        code = content.get("return_code")
        out = _first_line(content.get("stderr")) if code else _first_line(content.get("stdout"))
        said = f"exit {code}" + (f": {out}" if out else "")
        return said, said if code not in (0, None) else None
    refs = content.get("tool_references")
    if isinstance(refs, list):
        return "found " + ", ".join(str(r.get("tool_name") or "") for r in refs if isinstance(r, Mapping)), None
    return _first_line(content.get("text")) or kind or "done", None


def server_calls(blocks: Any, pending: dict[str, Mapping[str, Any]]) -> list[ServerCall]:
    """The server and MCP calls answered in ``blocks`` (one assistant message's), in order.
    ``pending``: calls still waiting for their result, carried to the next message (a paused
    turn's result opens it); a call is added there, and taken when its result comes."""
    found: list[ServerCall] = []
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind in SERVER_CALLS:
            pending[str(block.get("id") or "")] = block
        elif isinstance(kind, str) and kind.endswith("_tool_result") and "tool_use_id" in block:
            call = pending.pop(str(block.get("tool_use_id") or ""), None)
            if call is not None:
                outcome, error = _outcome(block)
                found.append(ServerCall(_called(call), outcome, error))
    return found


def unanswered(pending: dict[str, Mapping[str, Any]]) -> list[ServerCall]:
    """The calls whose result no message holds: said so, no outcome claimed."""
    calls = [ServerCall(_called(call), None, None) for call in pending.values()]
    pending.clear()
    return calls

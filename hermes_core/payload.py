"""The request payload: what goes on the wire, canonicalised so that equal requests are equal bytes.

A provider's prefix cache matches byte for byte, so everything around the (already stable) system
prompt must be stable too. ``assemble_payload`` does the provider-agnostic part:

* every string ``content`` is ``.strip()``-ped;
* tool-call ``function.arguments`` that are valid JSON are re-serialised with sorted keys and
  compact separators (the same call always has the same bytes; invalid JSON is left alone);
* metadata keys (``_compressed_summary`` and any other key starting with ``_``) are removed, and
  so are ``cache_control`` markers: the cache layout is the layout hook's job alone, so a request
  never carries more markers than the layout placed;
* tool definitions are sorted by name, so a host that reorders them (an MCP server reconnecting)
  keeps the same bytes.

The payload shape, which the ``hermes_payload_cache_layout`` hook receives and returns::

    {"provider": str, "model": str, "system": str, "messages": [...], "tools": [...]}

``system`` is a string until a layout marks it (Anthropic's layout turns it into a list of text
blocks); a layout may add keys such as ``prompt_cache_key``. ``to_openai`` and ``to_anthropic``
turn a payload into keyword arguments for the two wire formats.

Copy-on-write: the input list and its dicts are never mutated, and a message that needs no change
is the same object in the payload - this runs over the whole history on every request.

Incremental: ``build_request`` keeps each message's canonical form in the session's
``ProcessedHistory`` (``hermes_core.history``) and reuses it while the message is unchanged, and
``to_anthropic`` reuses that history's converted blocks for a payload it just built, so a turn
costs what is new plus a few list copies. Both give exactly what the from-scratch functions give.
Do not mutate a returned payload's messages: they are shared with the next request's.
"""

from __future__ import annotations

import functools
import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_core import bounded
from hermes_core.history import (
    IdRenamer,
    ProcessedHistory,
    anthropic_ids,
    renamed_blocks,
)
from hermes_core.records import PayloadContext

if TYPE_CHECKING:
    from hermes_core.session import Session

__all__ = [
    "anthropic_messages",
    "assemble_payload",
    "build_request",
    "release_request",
    "canonical_arguments",
    "canonical_message",
    "canonical_tools",
    "to_anthropic",
    "to_openai",
    "tool_name",
]

CACHE_CONTROL = "cache_control"


@functools.lru_cache(maxsize=65_536)
def canonical_arguments(arguments: str) -> str:
    """``arguments`` as compact sorted-key JSON; unchanged when it is not valid JSON.

    Cached: the same argument strings come back on every request of a session, and a cache hit
    (hash already stored on the string) is far cheaper than a parse and a dump. Arguments nested
    deeper than ``hermes_core.bounded.MAX_DEPTH`` (a model can write anything) stay the string
    they are: parsing them would exhaust the stack.
    """
    try:
        value = bounded.loads(arguments)
    except (ValueError, TypeError):
        return arguments
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_dropped(key: str) -> bool:
    return key[:1] == "_" or key == CACHE_CONTROL


def _has_dropped_key(mapping: Mapping[str, Any]) -> bool:
    for key in mapping:
        if key[:1] == "_" or key == CACHE_CONTROL:
            return True
    return False


def _canonical_call(call: Any) -> Any:
    if not isinstance(call, dict):
        return call
    fn = call.get("function")
    new_fn = fn
    if isinstance(fn, dict):
        args = fn.get("arguments")
        if isinstance(args, str):
            canonical = canonical_arguments(args)
            if canonical != args:
                new_fn = {**fn, "arguments": canonical}
    dropped = _has_dropped_key(call)
    if new_fn is fn and not dropped:
        return call
    out = {k: v for k, v in call.items() if not _is_dropped(k)} if dropped else dict(call)
    if new_fn is not fn:
        out["function"] = new_fn
    return out


def _canonical_calls(calls: list[Any]) -> list[Any]:
    out: list[Any] | None = None
    for index, call in enumerate(calls):
        canonical = _canonical_call(call)
        if canonical is not call:
            if out is None:
                out = list(calls)
            out[index] = canonical
    return calls if out is None else out


def _canonical_blocks(content: list[Any]) -> list[Any]:
    out: list[Any] | None = None
    for index, block in enumerate(content):
        if isinstance(block, dict) and CACHE_CONTROL in block:
            if out is None:
                out = list(content)
            out[index] = {k: v for k, v in block.items() if k != CACHE_CONTROL}
    return content if out is None else out


_UNCHANGED: Any = object()


def canonical_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """One message as it goes on the wire; the same object when nothing needs to change."""
    content = message.get("content")
    new_content = _UNCHANGED
    if isinstance(content, str):
        stripped = content.strip()
        if stripped is not content and stripped != content:
            new_content = stripped
    elif isinstance(content, list):
        blocks = _canonical_blocks(content)
        if blocks is not content:
            new_content = blocks
    calls = message.get("tool_calls")
    new_calls = _canonical_calls(calls) if calls and isinstance(calls, list) else calls
    dropped = _has_dropped_key(message)
    if new_content is _UNCHANGED and new_calls is calls and not dropped:
        return message
    out = {k: v for k, v in message.items() if not _is_dropped(k)} if dropped else dict(message)
    if new_content is not _UNCHANGED:
        out["content"] = new_content
    if new_calls is not calls:
        out["tool_calls"] = new_calls
    return out


def tool_name(tool: Any) -> str:
    """The name of a tool definition in OpenAI (``function.name``) or Anthropic (``name``) form."""
    if not isinstance(tool, Mapping):
        return ""
    fn = tool.get("function")
    if isinstance(fn, Mapping) and isinstance(fn.get("name"), str):
        return str(fn["name"])
    name = tool.get("name")
    return name if isinstance(name, str) else ""


def canonical_tools(tools: Sequence[Any] | None) -> list[Any]:
    """Tool definitions sorted by name (stable for equal names), without ``cache_control``."""
    if not tools:
        return []
    out = []
    for tool in tools:
        if isinstance(tool, dict) and CACHE_CONTROL in tool:
            tool = {k: v for k, v in tool.items() if k != CACHE_CONTROL}
        out.append(tool)
    out.sort(key=tool_name)
    return out


def assemble_payload(
    system_text: str | None,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Any] | None = None,
    *,
    provider: str = "",
    model: str = "",
) -> dict[str, Any]:
    """The canonical, provider-agnostic payload of one request (no cache markers).

    A leading ``system`` message in ``messages`` becomes the system text when ``system_text`` is
    empty (transcripts often carry one); otherwise system messages stay where they are and a
    layout treats them as not cacheable turns.
    """
    system = (system_text or "").strip()
    start = 0
    if not system and messages:
        first = messages[0]
        if first.get("role") == "system" and isinstance(first.get("content"), str):
            system = str(first["content"]).strip()
            start = 1
    out: list[Mapping[str, Any]] = []
    append = out.append
    for index in range(start, len(messages)):
        append(canonical_message(messages[index]))
    return {
        "provider": provider,
        "model": model,
        "system": system,
        "messages": out,
        "tools": canonical_tools(tools),
    }


_recent = threading.local()


def build_request(
    session: Session,
    messages: Sequence[Mapping[str, Any]],
    *,
    provider: str | None = None,
    tools: Sequence[Any] | None = None,
    ephemeral: str | None = None,
    copy: bool = True,
) -> dict[str, Any]:
    """What ``Session.request`` sends: the canonical payload with the provider's cache layout.

    The system text is the session's cached prompt plus ``ephemeral`` (never stored). The layout
    comes from ``hermes_payload_cache_layout``; with no plugin answering for the provider the
    payload goes out without cache markers. Messages unchanged since the session's previous
    request keep their canonical form (``Session.message_cache``); the result is the same as
    ``assemble_payload`` plus the layout. The layout gets a messages list made for this request
    (``PayloadContext.messages_writable``) and marks it in place. ``copy=False`` returns that
    list as laid out (no list copy): only for a caller that converts the payload at once
    (``to_openai``, ``to_anthropic``), drops it and calls ``release_request``.
    """
    provider_name = (provider if provider is not None else session.provider) or ""
    system_text = session.request_system_text(ephemeral)
    history: ProcessedHistory | None = getattr(session, "message_cache", None)
    lent: list[Any] | None = None
    if history is not None and (system_text or "").strip():
        with session._lock:
            history.sync(messages)
            # A list of the cache's canonical messages made for this request alone (kept up to
            # date between requests): the layout marks it in place instead of copying it.
            lent = history.lend()
            payload = {
                "provider": provider_name,
                "model": session.model or "",
                "system": system_text.strip(),
                "messages": lent,
                "tools": canonical_tools(tools),
            }
    else:
        history = None
        payload = assemble_payload(
            system_text, messages, tools, provider=provider_name, model=session.model or ""
        )
    config = session.config
    ttl = config.prompt_caching.cache_ttl if config is not None else "5m"
    ctx = PayloadContext(
        provider=provider_name,
        model=session.model or "",
        session_id=session.session_id or "",
        config=config,
        cache_ttl=ttl,
        static_system_prefix=getattr(session, "static_system_prefix", ""),
        messages_writable=True,
    )
    try:
        out = session.host.payload_cache_layout(payload, ctx)
    except BaseException:
        if history is not None:
            with session._lock:
                history.release(lent, reuse=False)
        raise
    if history is None or lent is None:
        return out
    with session._lock:
        laid_out = out.get("messages")
        marks = history.settle(lent, laid_out)
        if copy:
            if laid_out is lent:  # never hand the lent list to the host: it is reused
                out = {**out, "messages": list(laid_out)}
            history.release(lent)
            _recent.laid = None
        else:
            # For the conversion that follows: valid while the cache is not synced again
            # (another thread's request on this session changes its version).
            _recent.laid = (laid_out, marks, history.version)
    _recent.history = weakref.ref(history)
    return out


def release_request(session: Session, payload: Mapping[str, Any]) -> None:
    """After ``build_request(..., copy=False)`` and the payload's conversion: the lent list
    goes back to the session's cache for the next request (without this call, the next one
    copies the messages again)."""
    history: ProcessedHistory | None = getattr(session, "message_cache", None)
    if history is not None:
        with session._lock:
            history.release(payload.get("messages"))
    _recent.laid = None


# --- wire formats ---------------------------------------------------------------------------


def _openai_tool(tool: Any) -> Any:
    if isinstance(tool, Mapping) and "function" not in tool and "input_schema" in tool:
        fn = {"name": tool.get("name", ""), "parameters": tool.get("input_schema") or {}}
        if tool.get("description"):
            fn["description"] = tool["description"]
        return {"type": "function", "function": fn}
    return tool


def to_openai(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for an OpenAI-style ``chat.completions.create``.

    The system text becomes a leading ``system`` message (only when non-empty); a marked system
    (a list of text blocks) is kept as a list, which OpenRouter forwards to Anthropic models.
    """
    system = payload.get("system")
    messages: list[Any] = []
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(payload.get("messages") or ())
    out: dict[str, Any] = {"messages": messages}
    if payload.get("model"):
        out["model"] = payload["model"]
    tools = payload.get("tools")
    if tools:
        out["tools"] = [_openai_tool(t) for t in tools]
    if payload.get("prompt_cache_key"):
        out["prompt_cache_key"] = payload["prompt_cache_key"]
    return out


def _anthropic_tool(tool: Any) -> Any:
    if isinstance(tool, Mapping) and isinstance(tool.get("function"), Mapping):
        fn = tool["function"]
        out = {"name": fn.get("name", ""), "input_schema": fn.get("parameters") or {"type": "object"}}
        if fn.get("description"):
            out["description"] = fn["description"]
        if CACHE_CONTROL in tool:
            out[CACHE_CONTROL] = tool[CACHE_CONTROL]
        return out
    return tool


def _tool_input(arguments: Any) -> Any:
    if isinstance(arguments, str):
        try:
            return bounded.loads(arguments) if arguments.strip() else {}
        except ValueError:  # invalid, or too deep to parse (bounded.TooDeepError)
            return {"_raw_arguments": arguments}
    return arguments if arguments is not None else {}


def anthropic_blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The Anthropic content blocks of one OpenAI-format message, markers carried over.

    A top-level ``cache_control`` (how a layout marks a tool message or an empty content) lands
    on the last block.
    """
    role = message.get("role")
    content = message.get("content")
    blocks: list[dict[str, Any]] = []
    if role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": str(message.get("tool_call_id") or ""),
            "content": content if content is not None else "",
        }
        blocks.append(result)
    else:
        if isinstance(content, str):
            if content:
                blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, dict):
                    blocks.append(part)
                elif isinstance(part, str):
                    blocks.append({"type": "text", "text": part})
        elif isinstance(content, dict):
            blocks.append(content)
        for call in message.get("tool_calls") or ():
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            fn: Mapping[str, Any] = function if isinstance(function, Mapping) else {}
            blocks.append({
                "type": "tool_use",
                "id": str(call.get("id") or call.get("call_id") or ""),
                "name": str(fn.get("name") or ""),
                "input": _tool_input(fn.get("arguments")),
            })
    marker = message.get(CACHE_CONTROL)
    if marker is not None and blocks:
        blocks[-1] = {**blocks[-1], CACHE_CONTROL: marker}
    return blocks


def to_anthropic(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword arguments for Anthropic's ``messages.create`` (add ``max_tokens`` yourself).

    Assistant ``tool_calls`` become ``tool_use`` blocks, consecutive ``tool`` messages one user
    message of ``tool_result`` blocks, and a system message inside the history a user text block
    (the Messages API has no system role there).
    """
    out: dict[str, Any] = {}
    if payload.get("model"):
        out["model"] = payload["model"]
    system = payload.get("system")
    if system:
        out["system"] = system
    laid_out = payload.get("messages") or []
    ref = getattr(_recent, "history", None)
    history = ref() if ref is not None else None
    wire = None
    if history is not None and type(laid_out) is list:
        laid = getattr(_recent, "laid", None)
        marks = (laid[1] if laid is not None and laid[0] is laid_out and laid[2] == history.version
                 else None)
        wire = history.anthropic_messages(laid_out, marks)
    out["messages"] = wire if wire is not None else anthropic_messages(laid_out)
    tools = payload.get("tools")
    if tools:
        out["tools"] = [_anthropic_tool(t) for t in tools]
    return out


def anthropic_messages(payload_messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The Anthropic ``messages`` of canonical payload messages, built from scratch.

    Reused tool-call ids are renamed (``hermes_core.history.IdRenamer``): the Messages API
    rejects a request with two ``tool_use`` blocks of one id, and providers reuse ids.
    """
    renamer = IdRenamer()
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(payload_messages):
        role = message.get("role")
        ids, _ = anthropic_ids(message, index, renamer)
        blocks = renamed_blocks(anthropic_blocks(message), ids)
        if not blocks:
            continue
        if (
            role == "tool"
            and messages
            and messages[-1]["role"] == "user"
            and all(b.get("type") == "tool_result" for b in messages[-1]["content"])
        ):
            messages[-1]["content"].extend(blocks)
            continue
        messages.append({"role": "assistant" if role == "assistant" else "user", "content": list(blocks)})
    return messages

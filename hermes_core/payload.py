"""The request payload: what goes on the wire, canonicalised so that equal requests are equal bytes.

A provider's prefix cache matches byte for byte, so everything around the (already stable) system
prompt must be stable too. ``assemble_payload`` does the provider-agnostic part:

* every string ``content`` is ``.strip()``-ped;
* tool-call ``function.arguments`` that are valid JSON are re-serialised with sorted keys and
  compact separators (the same call always has the same bytes; invalid JSON is left alone);
* metadata keys (``_compressed_summary`` and any other key starting with ``_``) are removed,
  except the three the wire conversion reads (``_anthropic_content``: an Anthropic assistant
  message's original blocks; ``_is_error``; ``_cache_control``: a tool result's own marker), which ``to_openai`` / ``to_anthropic`` turn into
  the target's own shape; a message's top-level ``cache_control`` (the layout's own form) is
  removed, the history's markers on content blocks are kept (the host's own breakpoints, which
  the Anthropic layout counts and gives way to);
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
from hermes_core.conversion import (
    ANTHROPIC_CONTENT,
    REASONING_OMITTED,
    TOOL_RESULT_MARKER,
    WIRE_METADATA,
    anthropic_part,
    arguments_text,
    has_lone_surrogate,
    note,
    openai_part,
    original_blocks,
    placeholder,
    sendable_blocks,
    surrogates_escaped,
    user_image_part,
)
from hermes_core.diagnostics import record_warning
from hermes_core.history import (
    IdRenamer,
    ProcessedHistory,
    anthropic_ids,
    joins,
    renamed_blocks,
)
from hermes_core.records import PayloadContext
from hermes_core.responses import ORIGINAL_KEY as RESPONSES_ORIGINAL

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
    return (key[:1] == "_" and key not in WIRE_METADATA) or key == CACHE_CONTROL


def _has_dropped_key(mapping: Mapping[str, Any]) -> bool:
    for key in mapping:
        if (key[:1] == "_" and key not in WIRE_METADATA) or key == CACHE_CONTROL:
            return True
    return False


def _has_marker(block: Any) -> bool:
    return isinstance(block, Mapping) and CACHE_CONTROL in block


def user_breakpoints(message: Mapping[str, Any]) -> int:
    """``cache_control`` markers a history message carries on its content blocks (the host's
    own, kept and counted against Anthropic's limit of four)."""
    count = int(TOOL_RESULT_MARKER in message)
    kept = message.get(ANTHROPIC_CONTENT)  # a reply's own blocks may carry the host's markers
    if type(kept) is list:
        count += sum(1 for block in kept if isinstance(block, Mapping) and CACHE_CONTROL in block)
    content = message.get("content")
    if type(content) is not list:
        return count
    for block in content:
        if isinstance(block, Mapping) and CACHE_CONTROL in block:
            count += 1
    return count


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


_UNCHANGED: Any = object()


def canonical_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    """One message as it goes on the wire; the same object when nothing needs to change.

    Lone surrogates are written as ``\\udNNN`` text (a warning says how many): a request that
    holds one cannot be encoded, and Anthropic rejects it."""
    out = _canonical_message(message)
    if not has_lone_surrogate(out):
        return out
    fixed, count = surrogates_escaped(out)
    record_warning(
        "lone_surrogates_escaped",
        f"{count} lone surrogate(s) in a {message.get('role') or 'role-less'} message (text that "
        "is not valid Unicode, e.g. a file name decoded with surrogateescape) went out as "
        "\\udNNN text: no provider accepts them",
        count=count,
    )
    return fixed


def _canonical_message(message: Mapping[str, Any]) -> Mapping[str, Any]:
    content = message.get("content")
    new_content = _UNCHANGED
    if isinstance(content, str):
        stripped = content.strip()
        if stripped is not content and stripped != content:
            new_content = stripped
    calls = message.get("tool_calls")
    new_calls = _canonical_calls(calls) if calls and isinstance(calls, list) else calls
    dropped = _has_dropped_key(message)
    if new_content is _UNCHANGED and new_calls is calls and not dropped:
        return message
    out = {k: v for k, v in message.items() if not _is_dropped(k)} if dropped else dict(message)
    if dropped and _reasoning_only(message):  # what Chat shows in its place (openai_message)
        reasoning = message.get("_reasoning")
        out[REASONING_OMITTED] = len(reasoning) if isinstance(reasoning, str) else 0
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
            users = history.umark_total
    else:
        history = None
        payload = assemble_payload(
            system_text, messages, tools, provider=provider_name, model=session.model or ""
        )
        users = sum(user_breakpoints(m) for m in payload["messages"])
    _recent.user_breakpoints = users
    config = session.config
    ctx = PayloadContext(
        provider=provider_name,
        model=session.model or "",
        session_id=session.session_id or "",
        config=config,
        static_system_prefix=getattr(session, "static_system_prefix", ""),
        messages_writable=True,
        user_breakpoints=users,
    )
    try:
        out = session.host.payload_cache_layout(payload, ctx)
    except BaseException:
        if history is not None:
            with session._lock:
                history.release(lent, reuse=False)
        raise
    _recent.layout_marks = None
    if history is None or lent is None:
        return out
    with session._lock:
        laid_out = out.get("messages")
        marks = history.settle(lent, laid_out)
        _recent.layout_marks = len(marks) if marks is not None else None
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


def request_breakpoints(payload: Mapping[str, Any]) -> tuple[int, int]:
    """``(the history's own cache markers, the layout's)`` of the payload this thread's last
    ``build_request`` returned: what a request report states about breakpoints."""
    users = int(getattr(_recent, "user_breakpoints", 0) or 0)
    system = payload.get("system")
    ours = sum(1 for b in system if isinstance(b, Mapping) and CACHE_CONTROL in b) if isinstance(
        system, list) else 0
    marks = getattr(_recent, "layout_marks", None)
    if marks is None:  # not known from the message cache: count the laid-out messages
        marked = sum(1 for m in payload.get("messages") or () if isinstance(m, Mapping)
                     and (CACHE_CONTROL in m or _layout_marker(m) is not None))
        marks = max(0, marked - users)
    return users, ours + marks


def limit_breakpoints(messages: list[dict[str, Any]], limit: int,
                      notes: dict[str, int] | None) -> list[dict[str, Any]]:
    """Anthropic ``messages`` with at most ``limit`` ``cache_control`` markers: the latest are
    kept (they cache the longest prefix), earlier ones removed and counted. New message and
    block dicts where a marker goes; the input is not mutated."""
    seen = 0
    out = list(messages)
    for w in range(len(out) - 1, -1, -1):
        content = out[w].get("content")
        if not isinstance(content, list):
            continue
        new_content = None
        for j in range(len(content) - 1, -1, -1):
            block = content[j]
            if isinstance(block, Mapping) and CACHE_CONTROL in block:
                seen += 1
                if seen > limit:
                    if new_content is None:
                        new_content = list(content)
                    new_content[j] = {k: v for k, v in block.items() if k != CACHE_CONTROL}
                    note(notes, "dropped:cache_control beyond the four Anthropic takes")
        if new_content is not None:
            out[w] = {**out[w], "content": new_content}
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


def _openai_content(message: Mapping[str, Any], role: str, notes: dict[str, int] | None,
                    keep_markers: bool, relocated: list[Any] | None = None) -> Any:
    content = message.get("content")
    blocks = original_blocks(message) if ANTHROPIC_CONTENT in message else None
    if blocks is not None:
        # An Anthropic reply: its text in order, thinking and server-tool blocks as visible
        # placeholders (another vendor's signed reasoning cannot be sent anywhere else).
        pieces: list[str] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, Mapping) else None
            if kind == "tool_use":
                continue
            part = openai_part(block, "assistant", notes)
            if part is not None:
                pieces.append(str(part.get("text") or part.get("refusal") or ""))
        text = "\n\n".join(p for p in pieces if p)
        marker = content[-1].get(CACHE_CONTROL) if (
            keep_markers and isinstance(content, list) and content and isinstance(content[-1], Mapping)
        ) else None
        if marker is not None and text:
            return [{"type": "text", "text": text, CACHE_CONTROL: marker}]
        return text or (None if message.get("tool_calls") else "")
    if ANTHROPIC_CONTENT in message:
        _note_stale(message, notes)
    if type(content) is not list:
        return content
    out: list[Any] = []
    for part in content:
        image = user_image_part(part) if role == "tool" and relocated is not None else None
        if image is not None and relocated is not None:
            # Chat takes images in user messages only: the image goes to one right after
            # the tool results, and the result says where it went.
            note(notes, "converted:image in a tool result -> user message after the results")
            ident = str(message.get("tool_call_id") or "")
            relocated.extend(({"type": "text", "text": f"[image from the result of {ident}]"}, image))
            out.append({"type": "text", "text": "[image: in the user message after the tool results]"})
            continue
        converted = openai_part(part, role, notes, keep_markers=keep_markers)
        if converted is not None:
            out.append(converted)
    if len(out) == len(content) and all(a is b for a, b in zip(out, content)):
        return content
    return out if out or role != "tool" else ""


def _note_stale(message: Mapping[str, Any], notes: dict[str, int] | None) -> None:
    kept = message.get(ANTHROPIC_CONTENT)
    if isinstance(kept, list):
        lost = sum(1 for b in kept if isinstance(b, Mapping)
                   and b.get("type") not in ("text", "tool_use"))
        note(notes, "dropped:Anthropic blocks of a message rewritten since the reply", lost)


#: The roles of OpenAI Chat messages.
CHAT_ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})


def openai_message(message: Mapping[str, Any], notes: dict[str, int] | None = None, *,
                   keep_markers: bool = False, relocated: list[Any] | None = None) -> Mapping[str, Any]:
    """One canonical message as OpenAI Chat takes it: the same object when nothing changes.

    Anthropic blocks become OpenAI parts (an image as a data URL or a URL, a PDF as a ``file``
    part, text documents and search results as text), parts the role cannot take become
    visible placeholders, ``_is_error`` becomes a ``[tool error]`` marker in the result text.
    ``relocated``: a list that receives the images of a tool result (labelled ``image_url``
    parts) for a user message after the results (``place_relocated``); without it they are
    placeholders.
    """
    content = message.get("content")
    role = message.get("role")
    if role not in CHAT_ROLES:
        # A role Chat does not know (none, or a reader's own): user text, counted, as the
        # Anthropic conversion does; Chat rejects the request otherwise.
        note(notes, f"converted:{role or 'role-less'} message in the history -> user text")
        message = {**message, "role": "user"}
        role = "user"
    if type(content) is str and ANTHROPIC_CONTENT not in message and "_is_error" not in message and (
            TOOL_RESULT_MARKER not in message) and REASONING_OMITTED not in message:
        return message
    role = str(role or "")
    if REASONING_OMITTED in message:
        # A Responses turn of reasoning items alone: Chat cannot carry them and rejects an
        # assistant message with nothing in it, so a counted placeholder says what was there
        # (as for another vendor's thinking).
        note(notes, "placeholder:reasoning")
        chars = message[REASONING_OMITTED]
        out = {k: v for k, v in message.items() if k not in WIRE_METADATA}
        out["content"] = placeholder("reasoning", f"{chars:,} characters" if chars else "")
        return out
    calls = message.get("tool_calls")
    if type(calls) is list and any(_object_arguments(c) for c in calls):
        # Chat takes a call's arguments as JSON text only; a host may hold them as an object.
        note(notes, "converted:tool-call arguments object -> JSON text")
        message = {**message, "tool_calls": [_text_arguments(c) for c in calls]}
    new_content = _openai_content(message, role, notes, keep_markers, relocated)
    if new_content is content and ANTHROPIC_CONTENT not in message and "_is_error" not in message and (
            TOOL_RESULT_MARKER not in message):
        return message
    if TOOL_RESULT_MARKER in message:  # a marker on a tool message hangs OpenRouter; OpenAI has none
        note(notes, "dropped:cache_control of a tool result")
    out = {k: v for k, v in message.items() if k not in WIRE_METADATA}
    out["content"] = new_content
    if message.get("_is_error") and role == "tool":
        note(notes, "converted:is_error -> [tool error] marker")
        if isinstance(new_content, list):
            out["content"] = [{"type": "text", "text": "[tool error]"}, *new_content]
        else:
            out["content"] = f"[tool error] {new_content or ''}".rstrip()
    return out


def _reasoning_only(message: Mapping[str, Any]) -> bool:
    """An assistant message whose only content was Responses reasoning (nothing Chat takes)."""
    return (message.get("role") == "assistant" and not message.get("content")
            and not message.get("tool_calls") and not message.get("refusal")
            and ANTHROPIC_CONTENT not in message
            and any(isinstance(i, Mapping) and i.get("type") == "reasoning"
                    for i in message.get(RESPONSES_ORIGINAL) or ()))


def _object_arguments(call: Any) -> bool:
    fn = call.get("function") if isinstance(call, Mapping) else None
    return isinstance(fn, Mapping) and fn.get("arguments") is not None and not isinstance(fn["arguments"], str)


def _text_arguments(call: Any) -> Any:
    if not _object_arguments(call):
        return call
    fn = call["function"]
    return {**call, "function": {**fn, "arguments": arguments_text(fn["arguments"])}}


def place_relocated(messages: list[Any], relocated: Mapping[int, list[Any]]) -> list[Any]:
    """``messages`` (a list made for this request: changed in place) with, after each group of
    tool messages whose images were relocated (``relocated``: message index -> parts), one user
    message holding those images, labelled by the call they answer."""
    if not relocated:
        return messages
    groups: dict[int, list[Any]] = {}
    n = len(messages)
    for i in sorted(relocated):
        j = i + 1
        while j < n and messages[j].get("role") == "tool":
            j += 1
        groups.setdefault(j, []).extend(relocated[i])
    for j in sorted(groups, reverse=True):
        messages.insert(j, {"role": "user", "content": [
            {"type": "text", "text": "[images from the tool results above]"}, *groups[j]]})
    return messages


def to_openai(payload: Mapping[str, Any], notes: dict[str, int] | None = None) -> dict[str, Any]:
    """Keyword arguments for an OpenAI-style ``chat.completions.create``.

    The system text becomes a leading ``system`` message (only when non-empty); a marked system
    (a list of text blocks) is kept as a list, which OpenRouter forwards to Anthropic models.
    Messages go out as ``openai_message`` makes them; what that converts, replaces or drops is
    counted in ``notes``.
    """
    system = payload.get("system")
    messages: list[Any] = []
    if system:
        messages.append({"role": "system", "content": system})
    keep_markers = str(payload.get("provider") or "").strip().lower() == "openrouter"
    laid_out = payload.get("messages") or []
    ref = getattr(_recent, "history", None)
    history = ref() if ref is not None else None
    wire = None
    if history is not None and type(laid_out) is list:
        laid = getattr(_recent, "laid", None)
        marks = (laid[1] if laid is not None and laid[0] is laid_out and laid[2] == history.version
                 else None)
        wire = history.openai_messages(laid_out, marks, notes, keep_markers=keep_markers)
    if wire is None:
        wire = []
        relocated: dict[int, list[Any]] = {}
        for index, message in enumerate(laid_out):
            if type(message.get("content")) is str and len(message) < 3 and (  # {"role", "content"}
                    message.get("role") in CHAT_ROLES):
                wire.append(message)
                continue
            images: list[Any] = []
            wire.append(openai_message(message, notes, keep_markers=keep_markers, relocated=images))
            if images:
                relocated[index] = images
        place_relocated(wire, relocated)
    messages.extend(wire)
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


def _tool_input(arguments: Any, notes: dict[str, int] | None) -> Any:
    """A Chat tool call's arguments as a ``tool_use`` input, which must be a JSON object.

    Arguments that are not one (invalid JSON a model wrote, too deep to parse, a list or a
    number) go as ``{"arguments": <as they were>}``, counted: the model sees what it wrote, and
    no ``_`` key (our metadata, never sent) carries it.
    """
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    value: Any = arguments
    if isinstance(arguments, str):
        try:
            value = bounded.loads(arguments)
        except ValueError:  # invalid, or too deep to parse (bounded.TooDeepError)
            value = None
    if isinstance(value, Mapping):
        return value
    note(notes, "converted:tool arguments that are not a JSON object -> {\"arguments\": ...}")
    return {"arguments": arguments}


def _layout_marker(message: Mapping[str, Any]) -> Any:
    """The marker a layout put on a message: top-level, or on its last content part."""
    marker = message.get(CACHE_CONTROL)
    if marker is not None:
        return marker
    content = message.get("content")
    if type(content) is list and content and isinstance(content[-1], Mapping):
        return content[-1].get(CACHE_CONTROL)
    return None


def _tool_result_content(content: Any, notes: dict[str, int] | None) -> Any:
    if type(content) is not list:
        return content if content is not None else ""
    out: list[Any] = []
    for part in content:
        block = anthropic_part(part, "tool", notes)
        if block is None:
            continue
        if block.get("type") not in ("text", "image", "document", "search_result"):
            note(notes, f"placeholder:{block.get('type')} in a tool result")
            block = {"type": "text", "text": placeholder(str(block.get("type")), "in a tool result")}
        out.append(block)
    return out


def anthropic_blocks(message: Mapping[str, Any], notes: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The Anthropic content blocks of one canonical message, markers carried over.

    An assistant message that keeps its original blocks (``_anthropic_content``, still matching
    its text and calls) sends exactly those: thinking and redacted thinking with their
    signatures, in their order. OpenAI parts are converted (``hermes_core.conversion``), and
    what converts, is replaced or dropped is counted in ``notes``. A layout's marker (top-level,
    or on the last part of a marked copy) lands on the last block that can carry one.
    """
    role = message.get("role")
    content = message.get("content")
    blocks: list[dict[str, Any]] = []
    if role == "tool":
        result: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": str(message.get("tool_call_id") or ""),
            "content": _tool_result_content(content, notes),
        }
        if message.get("_is_error"):
            result["is_error"] = True
        if message.get(TOOL_RESULT_MARKER) is not None:
            result[CACHE_CONTROL] = message[TOOL_RESULT_MARKER]
        blocks.append(result)
    else:
        originals = original_blocks(message) if ANTHROPIC_CONTENT in message else None
        if originals is not None:
            marker = _layout_marker(message)
            blocks = list(sendable_blocks(originals, notes))
            if marker is not None:
                for i in range(len(blocks) - 1, -1, -1):
                    if blocks[i].get("type") not in ("thinking", "redacted_thinking"):
                        blocks[i] = {**blocks[i], CACHE_CONTROL: marker}
                        break
            return blocks
        if ANTHROPIC_CONTENT in message:
            _note_stale(message, notes)
        part_role = "assistant" if role == "assistant" else "user"
        if role not in ("assistant", "user"):
            note(notes, f"converted:{role} message in the history -> user text")
        if message.get("name"):  # the Messages API has no participant names
            note(notes, "dropped:name of a message")
        if isinstance(content, str):
            if content:
                blocks.append({"type": "text", "text": content})
        elif isinstance(content, list):
            for part in content:
                block = anthropic_part(part, part_role, notes)
                if block is not None:
                    blocks.append(block)
        elif isinstance(content, dict):
            block = anthropic_part(content, part_role, notes)
            if block is not None:
                blocks.append(block)
        refusal = message.get("refusal")
        if role == "assistant" and isinstance(refusal, str) and refusal:
            note(notes, "converted:refusal -> text block")
            blocks.append({"type": "text", "text": refusal})
        for call in message.get("tool_calls") or ():
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            fn: Mapping[str, Any] = function if isinstance(function, Mapping) else {}
            blocks.append({
                "type": "tool_use",
                "id": str(call.get("id") or call.get("call_id") or ""),
                "name": str(fn.get("name") or ""),
                "input": _tool_input(fn.get("arguments"), notes),
            })
    marker = message.get(CACHE_CONTROL)
    if marker is not None and blocks:
        blocks[-1] = {**blocks[-1], CACHE_CONTROL: marker}
    if not blocks:  # the Messages API rejects an empty message: it is left out, counted
        note(notes, f"dropped:empty {role} message")
    return blocks


def to_anthropic(payload: Mapping[str, Any], notes: dict[str, int] | None = None) -> dict[str, Any]:
    """Keyword arguments for Anthropic's ``messages.create`` (add ``max_tokens`` yourself).

    Assistant ``tool_calls`` become ``tool_use`` blocks, consecutive ``tool`` messages one user
    message of ``tool_result`` blocks, and a system message inside the history a user text block
    (the Messages API has no system role there). What the conversion changed is counted in
    ``notes`` (``hermes_core.conversion``).
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
        wire = history.anthropic_messages(laid_out, marks, notes)
    out["messages"] = wire if wire is not None else anthropic_messages(laid_out, notes)
    tools = payload.get("tools")
    if tools:
        out["tools"] = [_anthropic_tool(t) for t in tools]
    return out


def anthropic_messages(payload_messages: Sequence[Mapping[str, Any]],
                       notes: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The Anthropic ``messages`` of canonical payload messages, built from scratch.

    Reused tool-call ids are renamed (``hermes_core.history.IdRenamer``): the Messages API
    rejects a request with two ``tool_use`` blocks of one id, and providers reuse ids.
    """
    renamer = IdRenamer()
    messages: list[dict[str, Any]] = []
    for index, message in enumerate(payload_messages):
        role = message.get("role")
        ids, _ = anthropic_ids(message, index, renamer)
        blocks = renamed_blocks(anthropic_blocks(message, notes), ids)
        if not blocks:
            continue
        if messages and joins(messages[-1], role):  # consecutive turns of one role: one message
            messages[-1]["content"].extend(blocks)
            continue
        messages.append({"role": "assistant" if role == "assistant" else "user", "content": list(blocks)})
    return messages

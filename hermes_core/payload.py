"""The request payload: what goes on the wire, canonicalised so that equal requests are equal bytes.

A provider's prefix cache matches byte for byte: ``assemble_payload`` strips string contents,
writes arguments as compact sorted-key JSON, drops ``_`` keys (but ``conversion.WIRE_METADATA``)
and sorts tools by name - copy-on-write. Shape: ``{"provider", "model", "system", "messages",
"tools"}``. ``build_request`` reuses the session's ``ProcessedHistory``; ``wire`` converts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from hermes_core import bounded
from hermes_core.conversion import (
    ANTHROPIC_CONTENT,
    REASONING_OMITTED,
    TOOL_RESULT_MARKER,
    WIRE_METADATA,
    has_lone_surrogate,
    surrogates_escaped,
)
from hermes_core.diagnostics import record_warning
from hermes_core.records import PayloadContext
from hermes_core.responses_items import ORIGINAL_KEY as RESPONSES_ORIGINAL
from hermes_core.wire import CACHE_CONTROL, LaidOut, MessageCache, layout_marker

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.host import PluginHost

__all__ = [
    "BuiltRequest",
    "assemble_payload",
    "build_request",
    "canonical_arguments",
    "canonical_message",
    "canonical_tools",
    "lay_out_request",
    "release_request",
    "request_breakpoints",
    "tool_name",
    "user_breakpoints",
]


# A pure memo (the result is a function of the string alone, and immutable): the same argument
# strings come back on every request of a session and of a replayed one (cache reports).
@functools.lru_cache(maxsize=65_536)
def canonical_arguments(arguments: str) -> str:
    """``arguments`` as compact sorted-key JSON; unchanged when it is not valid JSON.

    A cache hit (the hash is stored on the string) is far cheaper than a parse and a dump.
    Arguments nested deeper than ``hermes_core.bounded.MAX_DEPTH`` (a model can write anything)
    stay the string they are: parsing them would exhaust the stack.
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



def _reasoning_only(message: Mapping[str, Any]) -> bool:
    """An assistant message whose only content was Responses reasoning (nothing Chat takes)."""
    return (message.get("role") == "assistant" and not message.get("content")
            and not message.get("tool_calls") and not message.get("refusal")
            and ANTHROPIC_CONTENT not in message
            and any(isinstance(i, Mapping) and i.get("type") == "reasoning"
                    for i in message.get(RESPONSES_ORIGINAL) or ()))


def tool_name(tool: Any) -> str:
    """The name of a tool definition in OpenAI (``function.name``, a custom tool's
    ``custom.name``) or Anthropic (``name``) form."""
    if not isinstance(tool, Mapping):
        return ""
    fn = tool.get("function") or tool.get("custom")
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


class LendingCache(MessageCache, Protocol):
    """What a request uses of the session's message cache (``history.ProcessedHistory``, which
    stands on this module): its canonical messages, lent to the layout and given back."""

    umark_total: int

    def sync(self, messages: Sequence[Mapping[str, Any]]) -> None: ...
    def lend(self) -> list[Any]: ...
    def settle(self, lent: list[Any], laid_out: Any) -> list[int] | None: ...
    def release(self, lent: Any, *, reuse: bool = True) -> None: ...


class RequestSession(Protocol):
    """What a request reads of ``session.Session`` (which stands on this module); its
    ``message_cache`` (a ``LendingCache``) and ``static_system_prefix`` are read when present."""

    provider: str
    model: str
    session_id: str
    config: Config
    host: PluginHost

    @property
    def _lock(self) -> AbstractContextManager[Any]: ...
    def request_system_text(self, ephemeral: str | None = None) -> str: ...


@attrs.frozen(kw_only=True, eq=False)
class BuiltRequest:
    """What ``lay_out_request`` made: the payload, the history's own cache markers
    (``user_breakpoints``), the markers the layout added to messages when the message cache
    knows them (``layout_marks``, else ``None``), and with ``copy=False`` the message cache
    that converts the payload's messages (``laid``, for ``to_openai`` / ``to_anthropic``)."""

    payload: dict[str, Any]
    user_breakpoints: int
    layout_marks: int | None = None
    laid: LaidOut | None = None


def build_request(
    session: RequestSession,
    messages: Sequence[Mapping[str, Any]],
    *,
    provider: str | None = None,
    tools: Sequence[Any] | None = None,
    ephemeral: str | None = None,
) -> dict[str, Any]:
    """What ``Session.request`` sends: the canonical payload with the provider's cache layout.

    The system text is the session's cached prompt plus ``ephemeral`` (never stored). The layout
    comes from ``hermes_payload_cache_layout``; with no plugin answering for the provider the
    payload goes out without cache markers. Messages unchanged since the session's previous
    request keep their canonical form (``Session.message_cache``); the result is the same as
    ``assemble_payload`` plus the layout.
    """
    return lay_out_request(session, messages, provider=provider, tools=tools,
                           ephemeral=ephemeral).payload


def lay_out_request(
    session: RequestSession,
    messages: Sequence[Mapping[str, Any]],
    *,
    provider: str | None = None,
    tools: Sequence[Any] | None = None,
    ephemeral: str | None = None,
    copy: bool = True,
) -> BuiltRequest:
    """``build_request`` with what it knows of the result (``BuiltRequest``).

    The layout gets a messages list made for this request (``PayloadContext.messages_writable``)
    and marks it in place. ``copy=False`` returns that list as laid out (no list copy): only
    for a caller that converts the payload at once (``to_openai`` / ``to_anthropic`` with
    ``laid``), drops it and calls ``release_request``.
    """
    provider_name = (provider if provider is not None else session.provider) or ""
    system_text = session.request_system_text(ephemeral)
    history: LendingCache | None = getattr(session, "message_cache", None)
    if history is None or not (system_text or "").strip():
        payload = assemble_payload(
            system_text, messages, tools, provider=provider_name, model=session.model or ""
        )
        users = sum(user_breakpoints(m) for m in payload["messages"])
        return BuiltRequest(payload=_laid_out(session, payload, users), user_breakpoints=users)
    with session._lock:
        history.sync(messages)
        # A list of the cache's canonical messages made for this request alone (kept up to
        # date between requests): the layout marks it in place instead of copying it.
        lent = history.lend()
        users = history.umark_total
    payload = {"provider": provider_name, "model": session.model or "",
               "system": system_text.strip(), "messages": lent, "tools": canonical_tools(tools)}
    try:
        out = _laid_out(session, payload, users)
    except BaseException:
        with session._lock:
            history.release(lent, reuse=False)
        raise
    with session._lock:
        laid_out = out.get("messages")
        marks = history.settle(lent, laid_out)
        layout_marks = len(marks) if marks is not None else None
        if not copy:
            # For the conversion that follows: valid while the cache is not synced again
            # (another thread's request on this session changes its version).
            laid = LaidOut(history=history, messages=laid_out, marks=marks, version=history.version)
            return BuiltRequest(payload=out, user_breakpoints=users, layout_marks=layout_marks,
                                laid=laid)
        if laid_out is lent:  # never hand the lent list to the host: it is reused
            out = {**out, "messages": list(laid_out)}
        history.release(lent)
    return BuiltRequest(payload=out, user_breakpoints=users, layout_marks=layout_marks)


def _laid_out(session: RequestSession, payload: dict[str, Any], users: int) -> dict[str, Any]:
    """``payload`` through the provider's cache layout (``hermes_payload_cache_layout``)."""
    config = session.config
    ctx = PayloadContext(
        provider=payload["provider"],
        model=session.model or "",
        session_id=session.session_id or "",
        config=config,
        static_system_prefix=getattr(session, "static_system_prefix", ""),
        messages_writable=True,
        user_breakpoints=users,
    )
    return session.host.payload_cache_layout(payload, ctx)


def request_breakpoints(built: BuiltRequest) -> tuple[int, int]:
    """``(the history's own cache markers, the layout's)`` of a built request: what a request
    report states about breakpoints."""
    payload = built.payload
    system = payload.get("system")
    ours = sum(1 for b in system if isinstance(b, Mapping) and CACHE_CONTROL in b) if isinstance(
        system, list) else 0
    marks = built.layout_marks
    if marks is None:  # not known from the message cache: count the laid-out messages
        marked = sum(1 for m in payload.get("messages") or () if isinstance(m, Mapping)
                     and (CACHE_CONTROL in m or layout_marker(m) is not None))
        marks = max(0, marked - built.user_breakpoints)
    return built.user_breakpoints, ours + marks


def release_request(session: RequestSession, payload: Mapping[str, Any]) -> None:
    """After ``lay_out_request(..., copy=False)`` and the payload's conversion: the lent list
    goes back to the session's cache for the next request (without this call, the next one
    copies the messages again)."""
    history: LendingCache | None = getattr(session, "message_cache", None)
    if history is not None:
        with session._lock:
            history.release(payload.get("messages"))



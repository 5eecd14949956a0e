"""The official SDKs' objects in, their keyword arguments out.

Objects (an OpenAI ``ChatCompletion``/``ChatCompletionMessage``, an Anthropic ``Message``) or
dicts of either shape are normalised once, at the ``Session`` surface (``as_message``,
``normalize_messages``), into OpenAI-format dicts; ``sdk_kwargs`` turns a canonical payload into
exactly what ``chat.completions.create`` or ``messages.create`` accept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.conversion import (
    ANTHROPIC_CONTENT,
    ANTHROPIC_ONLY_BLOCKS,
    TOOL_RESULT_MARKER,
    readable_of_blocks,
)
from hermes_core.messages import LEGACY_CONTEXT, from_legacy_function, is_legacy_function
from hermes_core.responses_items import canonical_messages, is_item, run_end
from hermes_core.wire import LaidOut, limit_breakpoints, to_anthropic, to_openai

__all__ = [
    "ANTHROPIC_DEFAULT_MAX_TOKENS",
    "as_message",
    "normalize_messages",
    "response_usage",
    "sdk_kwargs",
    "wire_format",
]

#: ``max_tokens`` is required by the Messages API; this is sent when neither the call nor the
#: session says otherwise.
ANTHROPIC_DEFAULT_MAX_TOKENS = 8192
#: Cache breakpoints the Messages API takes in one request (system, tools and messages).
MAX_BREAKPOINTS = 4

#: Providers whose native API is Anthropic's Messages API; every other provider name is taken to
#: speak OpenAI chat completions (OpenAI, Azure, OpenRouter, vLLM, Ollama, LM Studio, ...).
ANTHROPIC_PROVIDERS = frozenset({"anthropic"})

# Keys a message keeps when it came from an SDK object; the rest (annotations, audio ...)
# describes the response and has no place in the next request. ``refusal`` is the assistant's
# words (the Chat API takes it back on an assistant message).
_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name", "refusal")
_OPENAI_FUNCTION_KEYS = ("name", "description", "parameters", "strict")
_ANTHROPIC_TOOL_KEYS = ("name", "description", "input_schema", "cache_control", "type")


def wire_format(provider: str | None) -> str:
    """``"anthropic"`` for Anthropic's Messages API, else ``"openai"`` (chat completions)."""
    return "anthropic" if (provider or "").strip().lower() in ANTHROPIC_PROVIDERS else "openai"


# --- out: SDK keyword arguments ---------------------------------------------------------------


def _openai_tool(tool: Any) -> Any:
    # Catalog metadata (``source``, ...) must not reach the provider: it rejects unknown fields.
    if not isinstance(tool, Mapping) or not isinstance(tool.get("function"), Mapping):
        return tool
    fn = tool["function"]
    return {"type": "function", "function": {k: fn[k] for k in _OPENAI_FUNCTION_KEYS if k in fn}}


def _anthropic_tool(tool: Any) -> Any:
    if not isinstance(tool, Mapping):
        return tool
    return {k: tool[k] for k in _ANTHROPIC_TOOL_KEYS if k in tool}


def sdk_kwargs(payload: Mapping[str, Any], *, max_tokens: int | None = None,
               notes: dict[str, int] | None = None,
               breakpoints: tuple[int, int] | None = None,
               laid: LaidOut | None = None) -> dict[str, Any]:
    """Keyword arguments for the provider's official SDK, from a canonical payload.

    Anthropic (``payload["provider"] == "anthropic"``): ``model``, ``system`` (a string, or the
    marked text blocks of the cache layout), ``messages`` with ``tool_use``/``tool_result``
    blocks, ``tools`` with ``input_schema``, and ``max_tokens`` (required there: ``max_tokens``,
    else ``ANTHROPIC_DEFAULT_MAX_TOKENS``). Anything else: OpenAI chat completions - the system
    prompt as the leading ``system`` message, ``tools`` in function form, ``prompt_cache_key``
    when the layout set one, and ``max_tokens`` only when given.

    Parts the target does not define are converted or replaced by visible placeholders
    (``hermes_core.conversion``); each is counted in ``notes`` when given. Anthropic: the
    history's own ``cache_control`` markers are kept, but never more than four markers go out
    in all (the earliest beyond that are removed and counted); ``breakpoints`` (the history's,
    the layout's) spares the scan that counts them when the caller knows; ``laid``: the
    session's message cache of the payload's messages (``hermes_core.wire.LaidOut``).
    """
    if wire_format(payload.get("provider")) == "anthropic":
        out = to_anthropic(payload, notes, laid=laid)
        out["messages"] = _within_breakpoint_limit(payload, out["messages"], notes, breakpoints)
        if out.get("tools"):
            out["tools"] = [_anthropic_tool(t) for t in out["tools"]]
        out["max_tokens"] = int(max_tokens) if max_tokens else ANTHROPIC_DEFAULT_MAX_TOKENS
        return out
    out = to_openai(payload, notes, laid=laid)
    if out.get("tools"):
        out["tools"] = [_openai_tool(t) for t in out["tools"]]
    if max_tokens:
        out["max_tokens"] = int(max_tokens)
    return out


def _within_breakpoint_limit(payload: Mapping[str, Any], messages: list[dict[str, Any]],
                             notes: dict[str, int] | None,
                             breakpoints: tuple[int, int] | None) -> list[dict[str, Any]]:
    # The host's own markers are kept; beyond Anthropic's four in all (system included) the
    # earliest go, counted. With the counts known, a scan of the wire only when there are
    # more than four.
    system = payload.get("system")
    on_system = sum(1 for b in system if isinstance(b, Mapping) and "cache_control" in b) if (
        isinstance(system, list)) else 0
    if breakpoints is not None and sum(breakpoints) <= MAX_BREAKPOINTS:
        return messages
    return limit_breakpoints(messages, MAX_BREAKPOINTS - on_system, notes)


# --- in: SDK objects to message dicts ---------------------------------------------------------


def _plain(obj: Any) -> Any:
    """An SDK (pydantic) object as plain data; anything else unchanged."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump) and not isinstance(obj, Mapping):
        try:
            if type(obj).__module__.startswith("anthropic."):
                # What the API sent, its nulls too: a citation's ``document_title: null`` is a
                # required field the next request must carry back.
                return dump(mode="python", exclude_unset=True)
            return dump(mode="python", exclude_none=True)
        except TypeError:  # an older pydantic-like object without those keywords
            return dump()
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict) and not isinstance(obj, Mapping):
        return to_dict()
    return obj




#: The order in which the Messages API writes a block's keys. The SDK's objects dump their
#: fields in another (alphabetical) order; a block that came as an SDK object is put back in
#: the API's, so what goes back is the bytes that came (signatures are over content, but a
#: host comparing bytes, and the prefix cache, see the same text).
_BLOCK_KEY_ORDER = {
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
    "text": ("type", "text", "citations"),
    "tool_use": ("type", "id", "name", "input"),
    "server_tool_use": ("type", "id", "name", "input"),
}


def _wire_order(block: Any) -> Any:
    if not isinstance(block, dict):
        return block
    order = _BLOCK_KEY_ORDER.get(str(block.get("type")), ("type",))
    out = {k: block[k] for k in order if k in block}
    out.update((k, v) for k, v in block.items() if k not in out)
    return out


def _is_plain_block(block: Any) -> bool:
    """A text or tool_use block that its readable form (text, ``tool_calls``) says entirely."""
    if not isinstance(block, Mapping):
        return False
    kind = block.get("type")
    if kind == "text":
        return all(k in ("type", "text") or (k == "citations" and not block[k]) for k in block)
    return kind == "tool_use" and all(k in ("type", "id", "name", "input") for k in block)


def _from_anthropic_blocks(role: str, blocks: list[Any]) -> list[dict[str, Any]]:
    """One Anthropic-shaped message as OpenAI-format messages.

    ``tool_result`` blocks become ``tool`` messages (``is_error`` as ``_is_error``, a content of
    text blocks only as one string, any other content list kept as it is). An assistant
    message's text blocks become its ``content``, its ``tool_use`` blocks ``tool_calls``, its
    thinking ``_reasoning`` (readable), and when it holds anything those do not say exactly
    (thinking and its signature, redacted thinking, citations, server-tool blocks, the order of
    interleaved blocks) the original blocks are kept under ``_anthropic_content``, which an
    Anthropic request sends back unchanged. A user message keeps its blocks in their order.
    """
    plain_blocks = [b if isinstance(b, Mapping) else _wire_order(_plain(b)) for b in blocks]
    results: list[dict[str, Any]] = []
    rest: list[Any] = []
    for block in plain_blocks:
        if isinstance(block, Mapping) and block.get("type") == "tool_result":
            content = block.get("content")
            if isinstance(content, list):
                parts = [_plain(p) for p in content]
                if all(isinstance(p, Mapping) and p.get("type") == "text" and _is_plain_block(p)
                       for p in parts):
                    content = "\n\n".join(str(p.get("text") or "") for p in parts)
                else:
                    content = parts
            result: dict[str, Any] = {
                "role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""),
                "content": content if content is not None else "",
            }
            if block.get("is_error"):
                result["_is_error"] = True
            if block.get("cache_control") is not None:  # the host's own breakpoint
                result[TOOL_RESULT_MARKER] = block["cache_control"]
            results.append(result)
        else:
            rest.append(block)
    out: list[dict[str, Any]] = results
    if not rest and results:
        return out
    message: dict[str, Any] = {"role": role}
    if role == "assistant":
        text, calls = readable_of_blocks(rest)
        message["content"] = text
        if calls:
            message["tool_calls"] = calls
        reasoning = [str(b.get("thinking") or "") for b in rest
                     if isinstance(b, Mapping) and b.get("type") == "thinking"]
        if any(reasoning):
            message["_reasoning"] = "\n\n".join(r for r in reasoning if r)
        if not all(_is_plain_block(b) for b in rest):
            message[ANTHROPIC_CONTENT] = rest
    elif all(_is_plain_block(b) and b.get("type") == "text" for b in rest):
        message["content"] = "\n\n".join(str(b.get("text") or "") for b in rest)
    else:
        message["content"] = rest  # images, documents, search results, markers: in order
    out.append(message)
    return out


def _is_anthropic_shaped(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if type(content) is not list:
        return False
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
        if str(kind) in ANTHROPIC_ONLY_BLOCKS or (kind == "text" and isinstance(block, Mapping)
                                             and block.get("citations")):
            return True
    return False


def _openai_message(data: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: data[k] for k in _MESSAGE_KEYS if k in data}
    out.setdefault("role", "assistant")
    out.setdefault("content", None)
    calls = out.get("tool_calls")
    if isinstance(calls, list):
        out["tool_calls"] = [_plain(c) for c in calls]
        if not out["tool_calls"]:
            del out["tool_calls"]
    for key in ("audio", "annotations"):  # an audio reply, URL citations: when the reply has them
        if data.get(key):
            out[key] = data[key]
    for key in ("reasoning_content", "reasoning"):
        if isinstance(data.get(key), str) and data[key]:
            out["_reasoning"] = data[key]
            break
    out.update({k: v for k, v in data.items() if k[:1] == "_"})  # our metadata travels
    return out


def _expand(message: Any, from_sdk: bool = False) -> list[dict[str, Any]]:
    """One host message (dict or SDK object) as one or more OpenAI-format dicts."""
    data = _plain(message)
    from_sdk = from_sdk or data is not message
    if not isinstance(data, Mapping):
        raise TypeError(
            f"a message must be a dict or an SDK message object, got {type(message).__name__}"
        )
    if data.get("object") == "response" or is_item(data):  # the Responses API
        return canonical_messages([data], _plain)
    choices = data.get("choices")
    if isinstance(choices, list) and choices and "message" in (_plain(choices[0]) or {}):
        return _expand(_plain(choices[0])["message"], True)  # a whole ChatCompletion
    role = str(data.get("role") or "assistant")
    if isinstance(data.get("content"), list) and (
        data.get("type") == "message" or _is_anthropic_shaped(data)  # an Anthropic Message
    ):
        blocks = list(data["content"])
        if from_sdk:  # dumped from the SDK's objects: the API's key order back
            blocks = [_wire_order(b) for b in blocks]
        return _from_anthropic_blocks(role, blocks)
    if is_legacy_function(data):  # deprecated function calling: as the tool calls it means
        data = from_legacy_function(data)
        if not from_sdk:
            return [data]
    if not from_sdk and type(message) is dict:
        return [message]
    return [_openai_message(data)]


def as_message(obj: Any) -> dict[str, Any]:
    """The OpenAI-format message dict of an SDK reply, to append to the history.

    Takes an OpenAI ``ChatCompletion`` (its first choice) or ``ChatCompletionMessage`` (its
    ``refusal`` kept), an Anthropic ``Message`` (text blocks joined, ``tool_use`` blocks as
    ``tool_calls``, thinking readable as ``_reasoning``, and the original blocks under
    ``_anthropic_content`` so that an Anthropic request sends them back byte-identical: see
    docs/message-model.md), an OpenAI Responses ``Response`` or output item (one assistant
    message of the whole output, the items kept under ``_responses``: see
    ``hermes_core.responses_items``), or a dict (returned as it is when already OpenAI-shaped).
    """
    expanded = _expand(obj)
    if len(expanded) != 1:
        raise ValueError(
            f"this object stands for {len(expanded)} messages, not one; use normalize_messages"
        )
    return expanded[0]


def normalize_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """``messages`` with every SDK object and Anthropic-shaped dict as OpenAI-format dicts.

    The same list object when there is nothing to convert (the common case, checked with one
    type test per message: this runs on every request over the whole history); a new list
    otherwise. An Anthropic user message of ``tool_result`` blocks becomes one ``tool`` message
    per result. A run of OpenAI Responses items (dicts or SDK objects, a ``Response``) becomes
    one assistant message per turn and one ``tool`` message per output, the items kept under
    ``_responses`` (``hermes_core.responses_items``).
    """
    out: list[dict[str, Any]] | None = None
    index, n = 0, len(messages)
    while index < n:
        message = messages[index]
        # "type": Chat messages have none; Responses items do (``hermes_core.responses_items``).
        if type(message) is dict and type(message.get("content")) is not list \
                and "type" not in message and "function_call" not in message \
                and ("name" not in message or message.get("role") != "function"):
            # (Deprecated function calling - a function_call, a role "function" result, which
            # always has a name - is converted below.)
            if out is not None:
                out.append(message)
            index += 1
            continue
        # A run of Responses items converts as one: a turn's reasoning, text and parallel
        # calls become one assistant message, whatever their order.
        end = run_end(messages, index, _plain)
        if end > index:
            expanded = canonical_messages(messages[index:end], _plain)
        elif type(message) is dict and is_legacy_function(message):  # answers the call before it
            before = out[-LEGACY_CONTEXT:] if out is not None else messages[max(0, index - LEGACY_CONTEXT):index]
            expanded, end = [from_legacy_function(message, before)], index + 1
        else:
            expanded, end = _expand(message), index + 1
        if out is None:
            if end == index + 1 and len(expanded) == 1 and expanded[0] is message:
                index = end
                continue
            out = list(messages[:index])
        out.extend(expanded)
        index = end
    if out is None:
        return messages if isinstance(messages, list) else list(messages)
    return out


def response_usage(response: Any) -> Any:
    """The usage of a whole SDK response (``ChatCompletion``, ``Message``) or the usage itself."""
    if response is None:
        return None
    if isinstance(response, Mapping):
        usage = response.get("usage")
        return usage if isinstance(usage, Mapping) else response
    usage = getattr(response, "usage", None)
    return usage if usage is not None else response

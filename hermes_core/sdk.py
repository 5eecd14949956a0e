"""The official SDKs' objects in, their keyword arguments out.

Hosts hold whatever their SDK hands them: an OpenAI ``ChatCompletion`` or
``ChatCompletionMessage``, an Anthropic ``Message``, or plain dicts in either provider's shape.
Everything inside hermes-core works on OpenAI-format message dicts, so objects are normalised
once, at the ``Session`` surface (``as_message``, ``normalize_messages``), and never reach the
engines. On the way out, ``sdk_kwargs`` turns a canonical payload (``hermes_core.payload``) into
exactly the keyword arguments ``client.chat.completions.create`` or ``client.messages.create``
accept, so ``Session.request`` can be splatted into the SDK call as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.payload import to_anthropic, to_openai

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

#: Providers whose native API is Anthropic's Messages API; every other provider name is taken to
#: speak OpenAI chat completions (OpenAI, Azure, OpenRouter, vLLM, Ollama, LM Studio, ...).
ANTHROPIC_PROVIDERS = frozenset({"anthropic"})

# Keys a message keeps when it came from an SDK object; the rest (annotations, audio, refusal
# ...) describes the response and has no place in the next request.
_MESSAGE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
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


def sdk_kwargs(payload: Mapping[str, Any], *, max_tokens: int | None = None) -> dict[str, Any]:
    """Keyword arguments for the provider's official SDK, from a canonical payload.

    Anthropic (``payload["provider"] == "anthropic"``): ``model``, ``system`` (a string, or the
    marked text blocks of the cache layout), ``messages`` with ``tool_use``/``tool_result``
    blocks, ``tools`` with ``input_schema``, and ``max_tokens`` (required there: ``max_tokens``,
    else ``ANTHROPIC_DEFAULT_MAX_TOKENS``). Anything else: OpenAI chat completions - the system
    prompt as the leading ``system`` message, ``tools`` in function form, ``prompt_cache_key``
    when the layout set one, and ``max_tokens`` only when given.
    """
    if wire_format(payload.get("provider")) == "anthropic":
        out = to_anthropic(payload)
        if out.get("tools"):
            out["tools"] = [_anthropic_tool(t) for t in out["tools"]]
        out["max_tokens"] = int(max_tokens) if max_tokens else ANTHROPIC_DEFAULT_MAX_TOKENS
        return out
    out = to_openai(payload)
    if out.get("tools"):
        out["tools"] = [_openai_tool(t) for t in out["tools"]]
    if max_tokens:
        out["max_tokens"] = int(max_tokens)
    return out


# --- in: SDK objects to message dicts ---------------------------------------------------------


def _plain(obj: Any) -> Any:
    """An SDK (pydantic) object as plain data; anything else unchanged."""
    dump = getattr(obj, "model_dump", None)
    if callable(dump) and not isinstance(obj, Mapping):
        try:
            return dump(mode="python", exclude_none=True)
        except TypeError:  # an older pydantic-like object without those keywords
            return dump()
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict) and not isinstance(obj, Mapping):
        return to_dict()
    return obj


def _arguments_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value if value is not None else {}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


def _from_anthropic_blocks(role: str, blocks: list[Any]) -> list[dict[str, Any]]:
    """One Anthropic-shaped message as OpenAI-format messages (tool results become ``tool``
    messages, ``tool_use`` blocks ``tool_calls``, thinking ``_reasoning``)."""
    texts: list[str] = []
    other: list[Any] = []
    calls: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for block in blocks:
        block = _plain(block)
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "tool_use":
            calls.append({
                "id": str(block.get("id") or ""),
                "type": "function",
                "function": {"name": str(block.get("name") or ""),
                             "arguments": _arguments_text(block.get("input"))},
            })
        elif kind == "tool_result":
            content = block.get("content")
            if isinstance(content, list):
                parts = [_plain(p) for p in content]
                if all(isinstance(p, Mapping) and p.get("type") == "text" for p in parts):
                    content = "\n\n".join(str(p.get("text") or "") for p in parts)
                else:
                    content = parts
            result: dict[str, Any] = {
                "role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""),
                "content": content if content is not None else "",
            }
            if block.get("is_error"):
                result["_is_error"] = True
            results.append(result)
        elif kind in ("thinking", "redacted_thinking"):
            reasoning.append(str(block.get("thinking") or block.get("data") or ""))
        else:  # images, documents, server-tool blocks: kept as content parts
            other.append(block)
    out: list[dict[str, Any]] = list(results)
    if texts or calls or other or reasoning or not results:
        message: dict[str, Any] = {"role": role}
        if other:
            message["content"] = [{"type": "text", "text": t} for t in texts] + other
        else:
            message["content"] = "\n\n".join(texts)
        if calls:
            message["tool_calls"] = calls
        if reasoning:
            message["_reasoning"] = "\n\n".join(r for r in reasoning if r)
        out.append(message)
    return out


def _is_anthropic_shaped(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    if type(content) is not list:
        return False
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
        if kind in ("tool_use", "tool_result", "thinking", "redacted_thinking"):
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
    choices = data.get("choices")
    if isinstance(choices, list) and choices and "message" in (_plain(choices[0]) or {}):
        return _expand(_plain(choices[0])["message"], True)  # a whole ChatCompletion
    role = str(data.get("role") or "assistant")
    if isinstance(data.get("content"), list) and (
        data.get("type") == "message" or _is_anthropic_shaped(data)  # an Anthropic Message
    ):
        return _from_anthropic_blocks(role, list(data["content"]))
    if not from_sdk and type(message) is dict:
        return [message]
    return [_openai_message(data)]


def as_message(obj: Any) -> dict[str, Any]:
    """The OpenAI-format message dict of an SDK reply, to append to the history.

    Takes an OpenAI ``ChatCompletion`` (its first choice) or ``ChatCompletionMessage``, an
    Anthropic ``Message`` (text blocks joined, ``tool_use`` blocks as ``tool_calls``, thinking
    as ``_reasoning`` metadata), or a dict (returned as it is when already OpenAI-shaped).
    """
    expanded = _expand(obj)
    if len(expanded) != 1:
        raise ValueError(
            "this object holds tool results as well as a message; use normalize_messages"
        )
    return expanded[0]


def normalize_messages(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """``messages`` with every SDK object and Anthropic-shaped dict as OpenAI-format dicts.

    The same list object when there is nothing to convert (the common case, checked with one
    type test per message: this runs on every request over the whole history); a new list
    otherwise. An Anthropic user message of ``tool_result`` blocks becomes one ``tool`` message
    per result.
    """
    out: list[dict[str, Any]] | None = None
    for index, message in enumerate(messages):
        if type(message) is dict and type(message.get("content")) is not list:
            if out is not None:
                out.append(message)
            continue
        expanded = _expand(message)
        if out is None:
            if len(expanded) == 1 and expanded[0] is message:
                continue
            out = list(messages[:index])
        out.extend(expanded)
    if out is None:
        return messages if isinstance(messages, list) else list(messages)
    return out


def normalize_estimating(messages: Sequence[Any]) -> tuple[list[dict[str, Any]], int]:
    """``(normalize_messages(messages), estimate_messages_tokens of it)`` in one pass."""
    out, total, _proven = normalize_for_compression(messages)
    return out, total


def _ordered_ids(calls: Any) -> list[str] | None:
    """The call ids of a ``tool_calls`` list when every call is a dict with a non-empty string
    id (``pairing_problems``' usual form), else None."""
    if type(calls) is not list:
        return None
    ids: list[str] = []
    for call in calls:
        ident = (call.get("id") or call.get("call_id")) if type(call) is dict else None
        if type(ident) is not str or not ident:
            return None
        ids.append(ident)
    return ids


def _pairing_step(message: dict[str, Any], want: list[str] | None, k: int) -> tuple[bool, list[str] | None, int]:
    """One message of the usual-form proof (see ``normalize_for_compression``):
    ``(still proven, the ids the open block waits for, how many came)``."""
    role = message.get("role")
    if role == "tool":
        if want is None or message.get("tool_call_id") != want[k]:
            return False, None, 0
        k += 1
        return True, (None if k == len(want) else want), k
    if want is not None:
        return False, None, 0
    calls = message.get("tool_calls")
    if calls and role == "assistant":
        want = _ordered_ids(calls)
        return want is not None, want, 0
    return True, None, 0


def normalize_for_compression(messages: Sequence[Any]) -> tuple[list[dict[str, Any]], int, bool]:
    """``(normalize_messages(messages), estimate_messages_tokens of it, proven)`` in one pass.

    For a caller that needs all of a whole history (a manual compression): over 100k messages
    each pass is mostly the memory traffic of reading every message, so the second and third
    reads are what this saves, not the arithmetic (~0.3x issue 13's reference pass each).

    ``proven``: the list is valid by the provider pairing rule (``pairing.pairing_problems``
    with pending calls allowed is ``[]``), shown in the usual form only: every assistant
    message's calls carry non-empty string ids and their results follow it one per call, in
    the calls' order, then a message that is not a tool result (or the end of the list: calls
    still in flight). ``False`` says "not shown" - a valid list in another form (results in
    another order) is left to the full check.
    """
    from hermes_core.tokens import MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens

    out: list[dict[str, Any]] | None = None
    total = 0
    # The pairing proof, inline for plain messages (``_pairing_step`` for converted ones):
    # ``want`` the ids of the open block's calls, ``k`` how many of them were answered.
    proven = True
    want: list[str] | None = None
    k = 0
    for index, message in enumerate(messages):
        if type(message) is dict:
            content = message.get("content")
            if type(content) is not list:
                if out is not None:
                    out.append(message)
                calls = message.get("tool_calls")
                ids: list[str] | None = None
                if not calls:
                    # ``estimate_message_tokens`` of a plain text message, inline.
                    if type(content) is str:
                        total += (len(content) + 3) // 4 + MESSAGE_OVERHEAD_TOKENS
                    else:
                        total += estimate_message_tokens(message)
                elif type(content) is str and type(calls) is list:
                    # The calls' estimate (``estimate_message_tokens``) and ids (``_ordered_ids``)
                    # in one visit, for calls of the usual shape; any other goes to those two.
                    chars = len(content)
                    ids = []
                    for call in calls:
                        fn = call.get("function") if type(call) is dict else None
                        if type(fn) is not dict:
                            break
                        args = fn.get("arguments")
                        name = fn.get("name")
                        if type(args) is not str or type(name) is not str:
                            break
                        chars += len(args) + len(name) + 40
                        ident = call.get("id") or call.get("call_id")
                        if ids is not None:
                            if type(ident) is str and ident:
                                ids.append(ident)
                            else:
                                ids = None
                    else:
                        total += (chars + 3) // 4 + MESSAGE_OVERHEAD_TOKENS
                        chars = -1
                    if chars >= 0:
                        total += estimate_message_tokens(message)
                        ids = _ordered_ids(calls)
                else:
                    total += estimate_message_tokens(message)
                    ids = _ordered_ids(calls)
                if proven:
                    role = message.get("role")
                    if role == "tool":
                        if want is None or message.get("tool_call_id") != want[k]:
                            proven = False
                        else:
                            k += 1
                            if k == len(want):
                                want = None
                    elif want is not None:
                        proven = False
                    elif calls and role == "assistant":
                        want, k = ids, 0
                        proven = ids is not None
                continue
        expanded = _expand(message)
        for converted in expanded:
            total += estimate_message_tokens(converted)
            if proven:
                proven, want, k = _pairing_step(converted, want, k)
        if out is None:
            if len(expanded) == 1 and expanded[0] is message:
                continue
            out = list(messages[:index])
        out.extend(expanded)
    if out is None:
        out = messages if isinstance(messages, list) else list(messages)
    return out, total, proven


def response_usage(response: Any) -> Any:
    """The usage of a whole SDK response (``ChatCompletion``, ``Message``) or the usage itself."""
    if response is None:
        return None
    if isinstance(response, Mapping):
        usage = response.get("usage")
        return usage if isinstance(usage, Mapping) else response
    usage = getattr(response, "usage", None)
    return usage if usage is not None else response

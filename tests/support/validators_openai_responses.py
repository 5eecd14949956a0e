"""A validator of ``client.responses.create`` keyword arguments, from the OpenAI Responses API's
documented rules (API reference "Create a model response", the conversation-state and
function-calling guides, the reasoning guide's "keep reasoning items in context"):

* ``input`` is a list of items; every item is a message (``role`` user / system / developer /
  assistant, content a non-empty string or a non-empty list of the role's part types) or a
  typed item of a documented type; our ``_`` metadata keys never appear in it;
* ``function_call`` (and every client-side call) has a non-empty ``call_id``, unique, and a
  string ``name``/``arguments``; every ``*_output`` item answers a call of the matching type
  with the same ``call_id`` that came BEFORE it, and every call is answered (the API refuses
  "No tool output found for function call ..."), unless the caller allows calls in flight;
* a ``reasoning`` item has an ``id`` and a ``summary`` list and is followed by an item of its
  own turn (an assistant message, a call, a server-side item) - never by a call's output, a
  user message or the end ("... was provided without its required following item");
* ``tools``: function tools ``{"type": "function", "name", "parameters", "strict"}`` (name of
  letters, digits, ``_`` and ``-``, at most 64), or built-in tools with a ``type``;
* ``instructions`` a string, ``prompt_cache_key`` a string, ``max_output_tokens`` a positive
  integer, and no keyword the endpoint does not take.

``problems(kwargs)`` lists what is wrong (empty when valid); ``check`` raises with them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

CALL_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
OUTPUT_CALL = {v: k for k, v in CALL_OUTPUT.items()}
SERVER_SIDE = frozenset({
    "web_search_call", "file_search_call", "image_generation_call", "code_interpreter_call",
    "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
    "item_reference", "tool_search_call", "tool_search_output", "compaction",
})
ITEM_TYPES = frozenset({"message", "reasoning", *CALL_OUTPUT, *OUTPUT_CALL, *SERVER_SIDE})
INPUT_PARTS = frozenset({"input_text", "input_image", "input_file"})
ASSISTANT_PARTS = frozenset({"output_text", "refusal"})
KWARGS = frozenset({
    "model", "input", "instructions", "tools", "tool_choice", "prompt_cache_key",
    "max_output_tokens", "store", "include", "reasoning", "parallel_tool_calls", "temperature",
    "top_p", "metadata", "previous_response_id", "text", "truncation", "stream", "user",
    "service_tier", "background", "conversation", "prompt", "safety_identifier",
})
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _part_problems(part: Any, allowed: frozenset[str], where: str) -> list[str]:
    if not isinstance(part, Mapping):
        return [f"{where}: a content part must be an object"]
    kind = part.get("type")
    if kind not in allowed:
        return [f"{where}: part type {kind!r} not allowed here (allowed: {sorted(allowed)})"]
    if kind in ("input_text", "output_text") and not isinstance(part.get("text"), str):
        return [f"{where}: {kind} needs a string text"]
    if kind == "input_image":
        if part.get("detail") not in ("low", "high", "auto", "original"):
            return [f"{where}: input_image needs detail low/high/auto"]
        if not part.get("image_url") and not part.get("file_id"):
            return [f"{where}: input_image needs image_url or file_id"]
    if kind == "input_file" and not (part.get("file_id") or part.get("file_data")
                                     or part.get("file_url")):
        return [f"{where}: input_file needs file_id, file_data or file_url"]
    if kind == "refusal" and not isinstance(part.get("refusal"), str):
        return [f"{where}: refusal needs a string refusal"]
    return []


def _message_problems(item: Mapping[str, Any], where: str) -> list[str]:
    role = item.get("role")
    if role not in ("user", "system", "developer", "assistant"):
        return [f"{where}: role {role!r} is not user, system, developer or assistant"]
    content = item.get("content")
    if isinstance(content, str):
        return [] if content else [f"{where}: empty content"]
    if not isinstance(content, list) or not content:
        return [f"{where}: content must be a non-empty string or list of parts"]
    allowed = ASSISTANT_PARTS if role == "assistant" else INPUT_PARTS
    out: list[str] = []
    for n, part in enumerate(content):
        out.extend(_part_problems(part, allowed, f"{where} part {n}"))
    return out


def _output_problems(item: Mapping[str, Any], where: str) -> list[str]:
    output = item.get("output")
    kind = item.get("type")
    if kind == "computer_call_output":
        ok = isinstance(output, Mapping) and output.get("type") == "computer_screenshot"
        return [] if ok else [f"{where}: computer_call_output needs a computer_screenshot"]
    if isinstance(output, str):
        return []
    if kind == "function_call_output" and isinstance(output, list):
        out: list[str] = []
        for n, part in enumerate(output):
            out.extend(_part_problems(part, INPUT_PARTS, f"{where} output part {n}"))
        return out
    return [f"{where}: output must be a string" + (" or a list of input parts"
                                                   if kind == "function_call_output" else "")]


def _follows_reasoning(item: Mapping[str, Any]) -> bool:
    if "role" in item:
        return item.get("role") == "assistant"
    kind = item.get("type")
    return kind in CALL_OUTPUT or kind in SERVER_SIDE and kind not in (
        "mcp_approval_response", "item_reference")


def _leaked(item: Mapping[str, Any], where: str) -> list[str]:
    leaked = [k for k in item if isinstance(k, str) and k.startswith("_")]
    return [f"{where}: metadata keys reach the provider: {leaked}"] if leaked else []


def _reasoning_problems(item: Mapping[str, Any], where: str) -> list[str]:
    out: list[str] = []
    if not isinstance(item.get("id"), str) or not item.get("id"):
        out.append(f"{where}: reasoning needs its id")
    if not isinstance(item.get("summary"), list):
        out.append(f"{where}: reasoning needs a summary list")
    if "encrypted_content" in item and not isinstance(item["encrypted_content"], (str, type(None))):
        out.append(f"{where}: encrypted_content must be a string")
    return out


def _call_problems(item: Mapping[str, Any], kind: str, where: str, calls: dict[str, str]) -> list[str]:
    """A client-side call: its call_id (recorded in ``calls``) and its fields."""
    ident = item.get("call_id")
    if not isinstance(ident, str) or not ident:
        return [f"{where}: {kind} needs a non-empty call_id"]
    out: list[str] = []
    if ident in calls:
        out.append(f"{where}: call_id {ident!r} used by two calls")
    calls[ident] = kind
    if kind == "function_call" and not (isinstance(item.get("name"), str) and item["name"]
                                         and isinstance(item.get("arguments"), str)):
        out.append(f"{where}: function_call needs a name and string arguments")
    if kind == "custom_tool_call" and not isinstance(item.get("input"), str):
        out.append(f"{where}: custom_tool_call needs a string input")
    return out


def _answer_problems(item: Mapping[str, Any], kind: str, where: str, calls: dict[str, str],
                     answered: set[str]) -> list[str]:
    """A call's output: it answers, once, a call of its type made before it (recorded in ``answered``)."""
    out: list[str] = []
    ident = item.get("id") if kind == "local_shell_call_output" else item.get("call_id")
    if calls.get(str(ident)) != OUTPUT_CALL[kind]:
        out.append(f"{where}: {kind} for {ident!r} has no {OUTPUT_CALL[kind]} before it")
    elif ident in answered:
        out.append(f"{where}: a second output for {ident!r}")
    answered.add(str(ident))
    out.extend(_output_problems(item, where))
    return out


def input_problems(items: Any, *, allow_pending: bool = False) -> list[str]:
    if not isinstance(items, list):
        return ["input must be a list of items"]
    out: list[str] = []
    calls: dict[str, str] = {}  # call_id -> call type
    answered: set[str] = set()
    reasoning_open: int | None = None
    for index, item in enumerate(items):
        where = f"input[{index}]"
        if not isinstance(item, Mapping):
            out.append(f"{where}: an item must be an object")
            continue
        out.extend(_leaked(item, where))
        kind = item.get("type", "message" if "role" in item else None)
        if kind not in ITEM_TYPES:
            out.append(f"{where}: unknown item type {kind!r}")
            continue
        if reasoning_open is not None and kind != "reasoning":
            if not _follows_reasoning(item):
                out.append(f"input[{reasoning_open}]: reasoning item not followed by an item "
                           f"of its turn (followed by {kind!r})")
            reasoning_open = None
        if kind == "message":
            out.extend(_message_problems(item, where))
        elif kind == "reasoning":
            out.extend(_reasoning_problems(item, where))
            if reasoning_open is None:
                reasoning_open = index
        elif kind in CALL_OUTPUT:
            out.extend(_call_problems(item, str(kind), where, calls))
        elif kind in OUTPUT_CALL:
            out.extend(_answer_problems(item, str(kind), where, calls, answered))
    if reasoning_open is not None:
        out.append(f"input[{reasoning_open}]: reasoning item at the end, with nothing after it")
    if not allow_pending:
        missing = [i for i in calls if i not in answered]
        if missing:
            out.append(f"calls without an output: {missing}")
    return out


def tool_problems(tools: Any) -> list[str]:
    if not isinstance(tools, list):
        return ["tools must be a list"]
    out: list[str] = []
    names: set[str] = set()
    for n, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or not isinstance(tool.get("type"), str):
            out.append(f"tools[{n}]: a tool needs a type")
            continue
        if tool["type"] != "function":
            continue
        extra = set(tool) - {"type", "name", "description", "parameters", "strict",
                             "defer_loading", "output_schema", "allowed_callers"}
        if extra:
            out.append(f"tools[{n}]: unknown keys {sorted(extra)}")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            out.append(f"tools[{n}]: bad function name {name!r}")
        elif name in names:
            out.append(f"tools[{n}]: duplicate function name {name!r}")
        names.add(str(name))
        if "parameters" not in tool or not isinstance(tool["parameters"], (Mapping, type(None))):
            out.append(f"tools[{n}]: parameters (an object or null) are required")
        if "strict" not in tool or not isinstance(tool["strict"], (bool, type(None))):
            out.append(f"tools[{n}]: strict (a boolean or null) is required")
    return out


def problems(kwargs: Mapping[str, Any], *, allow_pending: bool = False) -> list[str]:
    out = [f"unknown keyword {k!r}" for k in kwargs if k not in KWARGS]
    if "instructions" in kwargs and not isinstance(kwargs["instructions"], str):
        out.append("instructions must be a string")
    if "prompt_cache_key" in kwargs and not isinstance(kwargs["prompt_cache_key"], str):
        out.append("prompt_cache_key must be a string")
    if "max_output_tokens" in kwargs and not (isinstance(kwargs["max_output_tokens"], int)
                                              and kwargs["max_output_tokens"] > 0):
        out.append("max_output_tokens must be a positive integer")
    out.extend(input_problems(kwargs.get("input"), allow_pending=allow_pending))
    if "tools" in kwargs:
        out.extend(tool_problems(kwargs["tools"]))
    return out


def check(kwargs: Mapping[str, Any], *, allow_pending: bool = False) -> None:
    found = problems(kwargs, allow_pending=allow_pending)
    if found:
        raise AssertionError("invalid Responses request:\n  " + "\n  ".join(found[:20]))

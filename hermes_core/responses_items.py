"""Responses API items in the history: recognised, and made canonical messages.

``canonical_messages`` turns a run of items into canonical messages: one assistant turn's items
(reasoning, messages, calls, server-side items) become ONE assistant message, so compaction keeps
or removes a turn whole, and an output item a ``tool`` message. Each keeps its items unchanged
under ``_responses`` (``ORIGINAL_KEY``) for a byte-identical replay (``hermes_core.responses``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core import bounded

__all__ = ["CALL_OUTPUT", "ORIGINAL_KEY", "OUTPUTS", "assistant_message", "canonical_messages", "is_item",
           "placeholder", "run_end"]


#: The key of a canonical message that holds the Responses items it stands for.
ORIGINAL_KEY = "_responses"

#: Client-side calls and the type of the item that answers each (paired by ``call_id``; a
#: ``local_shell_call_output`` names its call in ``id``).
CALL_OUTPUT = {
    "function_call": "function_call_output",
    "custom_tool_call": "custom_tool_call_output",
    "computer_call": "computer_call_output",
    "local_shell_call": "local_shell_call_output",
    "shell_call": "shell_call_output",
    "apply_patch_call": "apply_patch_call_output",
}
OUTPUTS = frozenset(CALL_OUTPUT.values())
#: Content part types of a Responses message (Chat uses ``text``, ``image_url`` ...).
PART_TYPES = frozenset({"input_text", "output_text", "refusal", "input_image", "input_file"})
_CALL_META = ("type", "id", "call_id", "status")


def is_item(data: Any) -> bool:
    """Whether ``data`` (a plain dict) is a Responses item rather than a Chat message or an
    Anthropic message: a typed dict without a role, or a message whose parts are Responses
    parts (or a string, with ``"type": "message"``)."""
    if not isinstance(data, Mapping):
        return False
    if "role" not in data:
        return isinstance(data.get("type"), str)
    content = data.get("content")
    if isinstance(content, list):
        return any(isinstance(p, Mapping) and str(p.get("type")) in PART_TYPES for p in content)
    return bool(data.get("type") == "message" and isinstance(content, str))


def run_end(messages: Sequence[Any], start: int, plain: Callable[[Any], Any]) -> int:
    """The end of the run of Responses items that starts at ``start`` (``start`` when none)."""
    end = start
    n = len(messages)
    while end < n and is_item(plain(messages[end])):
        end += 1
    return end


def dumps(value: Any) -> str:
    if bounded.value_depth(value) > bounded.MAX_DEPTH:
        return bounded.too_deep_note("tool-call arguments")
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def call_id_of(item: Mapping[str, Any]) -> str:
    ident = item.get("call_id")
    if not ident and item.get("type") == "local_shell_call_output":
        ident = item.get("id")
    return str(ident or "")


def tool_call(item: Mapping[str, Any]) -> dict[str, Any]:
    kind = item.get("type")
    if kind == "custom_tool_call":  # Chat's own custom call: free text, not JSON arguments
        text = item.get("input")
        return {"id": call_id_of(item), "type": "custom", "custom": {
            "name": str(item.get("name") or ""), "input": text if isinstance(text, str) else dumps(text)}}
    if kind == "function_call":
        name, arguments = item.get("name"), item.get("arguments")
    else:  # computer, local shell, shell, apply_patch: the action is the arguments
        name = item.get("name") or str(kind).removesuffix("_call")
        arguments = {k: v for k, v in item.items() if k not in _CALL_META}
    if not isinstance(arguments, str):
        arguments = dumps(arguments if arguments is not None else {})
    return {"id": call_id_of(item), "type": "function",
            "function": {"name": str(name or ""), "arguments": arguments}}


def placeholder(item: Mapping[str, Any]) -> str:
    """The one line a Chat or Anthropic model sees for a server-side item."""
    kind = str(item.get("type") or "item")
    detail = ""
    action = item.get("action")
    if isinstance(action, Mapping) and isinstance(action.get("query"), str):
        detail = f": {action['query'][:200]}"
    elif isinstance(item.get("queries"), list):
        detail = ": " + "; ".join(str(q)[:100] for q in item["queries"][:5])
    elif isinstance(item.get("name"), str):
        detail = f": {item['name']}"
    elif kind == "item_reference":
        detail = f": {item.get('id', '')}"
    return f"[{kind} omitted{detail}]"


def chat_part(part: Any) -> Any:
    """One Responses content part as a Chat part (text, image_url, file)."""
    if not isinstance(part, Mapping):
        return {"type": "text", "text": str(part)}
    kind = part.get("type")
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": str(part.get("text") or "")}
    if kind == "refusal":
        return {"type": "text", "text": str(part.get("refusal") or "")}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        image: dict[str, Any] = {"url": part["image_url"]}
        if part.get("detail") in ("low", "high", "auto"):
            image["detail"] = part["detail"]
        return {"type": "image_url", "image_url": image}
    if kind == "input_file" and (part.get("file_id") or part.get("file_data")):
        return {"type": "file", "file": {k: part[k] for k in ("file_id", "file_data", "filename")
                                         if isinstance(part.get(k), str)}}
    what = "image" if kind == "input_image" else "file" if kind == "input_file" else str(kind)
    ident = part.get("file_id") or part.get("file_url") or ""
    return {"type": "text", "text": f"[{what} omitted{': ' + str(ident) if ident else ''}]"}


def _chat_content(content: Any) -> Any:
    """A Responses message's content as Chat content: a string when it is all text."""
    if not isinstance(content, list):
        return content if content is not None else ""
    parts = [chat_part(p) for p in content]
    if all(p.get("type") == "text" for p in parts):
        return "\n\n".join(p["text"] for p in parts)
    return parts


def _output_content(item: Mapping[str, Any]) -> Any:
    output = item.get("output")
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):  # a computer screenshot
        return f"[{output.get('type') or 'output'} omitted]"
    if isinstance(output, list):
        content = _chat_content(output)
        if isinstance(content, list):  # Chat tool content is text parts only
            return "\n\n".join(p.get("text") or f"[{p.get('type')} omitted]" for p in content)
        return content
    return "" if output is None else dumps(output)


class _Run:
    """Canonical messages of a run of items; the open assistant turn collects until a message
    of another role or a call's output ends it."""

    def __init__(self) -> None:
        self.out: list[dict[str, Any]] = []
        self.turn: list[Mapping[str, Any]] = []

    def close_turn(self) -> None:
        if self.turn:
            self.out.append(assistant_message(self.turn))
            self.turn = []

    def add(self, item: Mapping[str, Any]) -> None:
        kind = str(item.get("type"))  # a list type is unhashable: no known kind
        role = item.get("role")
        if kind in OUTPUTS:
            self.close_turn()
            self.out.append({"role": "tool", "tool_call_id": call_id_of(item),
                             "content": _output_content(item), ORIGINAL_KEY: [item]})
        elif role is not None and role != "assistant":
            self.close_turn()
            self.out.append({"role": str(role), "content": _chat_content(item.get("content")),
                             ORIGINAL_KEY: [item]})
        else:
            self.turn.append(item)


def assistant_message(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The canonical assistant message of one turn's items (see the module doc)."""
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    reasoning: list[str] = []
    for item in items:
        kind = str(item.get("type"))
        if kind == "reasoning":
            for piece in (item.get("summary") or ()):
                if isinstance(piece, Mapping) and piece.get("text"):
                    reasoning.append(str(piece["text"]))
        elif kind in CALL_OUTPUT:
            calls.append(tool_call(item))
        elif item.get("role") == "assistant":
            content = item.get("content")
            for part in content if isinstance(content, list) else [content]:
                if isinstance(part, Mapping) and part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal") or ""))
                elif isinstance(part, str):
                    texts.append(part)
                elif part is not None:
                    chat = chat_part(part)
                    texts.append(chat.get("text") or f"[{part.get('type')} omitted]")
        else:
            texts.append(placeholder(item))
    message: dict[str, Any] = {"role": "assistant",
                               "content": "\n\n".join(texts) if texts or not calls else None}
    if calls:
        message["tool_calls"] = calls
    if refusals:
        message["refusal"] = "\n\n".join(refusals)
    if reasoning:
        message["_reasoning"] = "\n\n".join(reasoning)
    message[ORIGINAL_KEY] = list(items)
    return message


def canonical_messages(items: Sequence[Any], plain: Callable[[Any], Any]) -> list[dict[str, Any]]:
    """Canonical messages of a run of Responses items (SDK objects or dicts; ``plain`` makes
    an SDK object plain data). A ``Response`` object stands for its ``output`` items."""
    run = _Run()
    for raw in items:
        data = plain(raw)
        if isinstance(data, Mapping) and data.get("object") == "response":
            for item in data.get("output") or ():
                run.add(plain(item))
        else:
            run.add(data)
    run.close_turn()
    return run.out

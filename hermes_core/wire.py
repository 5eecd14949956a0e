"""The wire formats: a canonical payload (``hermes_core.payload``) as the keyword arguments of
OpenAI Chat (``to_openai``) or Anthropic Messages (``to_anthropic``).

Pure converters; a caller holding the session's message cache passes it (``LaidOut``) so an
unchanged message converts once per session, with the same result. Changes go into ``notes``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from hermes_core import bounded
from hermes_core.conversion import (
    ANTHROPIC_BLOCKS,
    ANTHROPIC_CONTENT,
    REASONING_OMITTED,
    TOOL_RESULT_BLOCKS,
    TOOL_RESULT_MARKER,
    WIRE_METADATA,
    anthropic_part,
    arguments_text,
    note,
    openai_part,
    openai_text_of_blocks,
    original_blocks,
    placeholder,
    sendable_blocks,
    takes_marker,
    user_image_part,
)
from hermes_core.messages import LEGACY_FUNCTION, audio_reply_text, custom_tool_definition, tool_call_fields
from hermes_core.wire_ids import IdRenamer, anthropic_ids, joins, renamed_blocks

__all__ = [
    "CACHE_CONTROL",
    "CHAT_ROLES",
    "LaidOut",
    "anthropic_blocks",
    "anthropic_messages",
    "layout_marker",
    "limit_breakpoints",
    "openai_message",
    "place_relocated",
    "to_anthropic",
    "to_openai",
]

CACHE_CONTROL = "cache_control"


class MessageCache(Protocol):
    """What a conversion reads of the session's message cache (``history.ProcessedHistory``,
    which stands on this module)."""

    @property
    def version(self) -> int: ...
    def openai_messages(self, laid_out: list[Any], marks: list[int] | None = None,
                        notes: dict[str, int] | None = None, *, keep_markers: bool = False,
                        head: Sequence[Any] = ()) -> list[Any] | None: ...
    def anthropic_messages(self, laid_out: list[Any], marks: list[int] | None = None,
                           notes: dict[str, int] | None = None) -> list[dict[str, Any]] | None: ...


@attrs.frozen(kw_only=True, eq=False)
class LaidOut:
    """A payload's messages as ``lay_out_request`` left them, with the session's message cache
    that holds their conversions: ``marks`` are the positions the layout changed (``None``:
    found by comparison), ``version`` the cache's version then (a later sync of the cache, by
    another thread's request on the session, makes ``marks`` stale)."""

    history: MessageCache
    messages: Any
    marks: list[int] | None
    version: int

    def changed(self, laid_out: Any) -> list[int] | None:
        """``marks`` when they describe ``laid_out`` and the cache is as it was, else ``None``."""
        if laid_out is self.messages and self.version == self.history.version:
            return self.marks
        return None


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



def _openai_tool(tool: Any) -> Any:
    if isinstance(tool, Mapping) and tool.get("type") == "custom" and "custom" not in tool and (
            "input_schema" not in tool):  # a Responses custom tool: Chat nests its fields
        return {"type": "custom", "custom": {k: v for k, v in tool.items()
                                             if k in ("name", "description", "format")}}
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
        text = openai_text_of_blocks(blocks, notes)
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
    if not content and role == "tool":  # an empty result: Chat takes no empty list, "" says the same
        note(notes, "converted:empty tool content list -> \"\"")
        return ""
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


#: What a message of the deprecated function-calling form counts as (``messages.from_legacy_function``).
_LEGACY_NOTE = "converted:deprecated function call or result -> tool call or result"

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
    if "audio" in message:
        message = _audio_by_id(message, notes)
    if type(content) is str and ANTHROPIC_CONTENT not in message and "_is_error" not in message and (
            TOOL_RESULT_MARKER not in message) and REASONING_OMITTED not in message and (
            LEGACY_FUNCTION not in message):
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
            TOOL_RESULT_MARKER not in message) and LEGACY_FUNCTION not in message:
        return message
    if LEGACY_FUNCTION in message:
        note(notes, _LEGACY_NOTE)
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


def _audio_by_id(message: Mapping[str, Any], notes: dict[str, int] | None) -> Mapping[str, Any]:
    """An assistant's earlier audio reply as Chat takes it back: ``{"id"}`` alone (a host that
    kept the response's whole ``audio`` object would send its base64 ``data`` again), counted."""
    audio = message.get("audio")
    if message.get("role") != "assistant" or not isinstance(audio, Mapping) or not audio.get("id") or (
            len(audio) == 1):
        return message
    note(notes, "converted:audio reply -> its id")
    return {**message, "audio": {"id": audio["id"]}}


def _object_arguments(call: Any) -> bool:
    fn = call.get("function") if isinstance(call, Mapping) else None
    return isinstance(fn, Mapping) and fn.get("arguments") is not None and not isinstance(fn["arguments"], str)


def _text_arguments(call: Any) -> Any:
    if not _object_arguments(call):
        return call
    fn = call["function"]
    return {**call, "function": {**fn, "arguments": arguments_text(fn["arguments"])}}


def place_relocated(messages: list[Any], relocated: Mapping[int, list[Any]], start: int = 0) -> list[Any]:
    """``messages`` (a list made for this request, changed in place; message 0 at ``start``) with,
    after each group of tool messages whose images were relocated (``relocated``: message index ->
    parts), one user message holding those images, labelled by the call they answer."""
    if not relocated:
        return messages
    groups: dict[int, list[Any]] = {}
    n = len(messages)
    for i in sorted(relocated):
        j = start + i + 1
        while j < n and messages[j].get("role") == "tool":
            j += 1
        groups.setdefault(j, []).extend(relocated[i])
    for j in sorted(groups, reverse=True):
        messages.insert(j, {"role": "user", "content": [
            {"type": "text", "text": "[images from the tool results above]"}, *groups[j]]})
    return messages


def to_openai(payload: Mapping[str, Any], notes: dict[str, int] | None = None, *,
              laid: LaidOut | None = None) -> dict[str, Any]:
    """Keyword arguments for an OpenAI-style ``chat.completions.create``.

    The system text becomes a leading ``system`` message (only when non-empty); a marked system
    (a list of text blocks) is kept as a list, which OpenRouter forwards to Anthropic models.
    Messages go out as ``openai_message`` makes them; what that converts, replaces or drops is
    counted in ``notes``. ``laid``: the session's message cache for these messages (the same
    result, each unchanged message converted once per session).
    """
    system = payload.get("system")
    # The list is made once at its final size, system message first: inserted afterwards it
    # moves the whole list (may reallocate it), a second copy touches every message again.
    head: list[Any] = [{"role": "system", "content": system}] if system else []
    keep_markers = str(payload.get("provider") or "").strip().lower() == "openrouter"
    laid_out = payload.get("messages") or []
    wire = None
    if laid is not None and type(laid_out) is list:
        wire = laid.history.openai_messages(laid_out, laid.changed(laid_out), notes,
                                            keep_markers=keep_markers, head=head)
    if wire is None:
        wire, start = head, len(head)  # ``head`` grows into the list
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
        place_relocated(wire, relocated, start)
    out: dict[str, Any] = {"messages": wire}
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
    if isinstance(tool, Mapping) and tool.get("type") == "custom" and "input_schema" not in tool:
        # Chat nests a custom tool under "custom", the Responses API has it flat.
        custom = tool.get("custom")
        return custom_tool_definition(custom if isinstance(custom, Mapping) else tool, tool.get(CACHE_CONTROL))
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


def layout_marker(message: Mapping[str, Any]) -> Any:
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
        if block.get("type") in ANTHROPIC_BLOCKS - TOOL_RESULT_BLOCKS:  # (a newer type passes)
            note(notes, f"placeholder:{block.get('type')} in a tool result")
            block = {"type": "text", "text": placeholder(str(block.get("type")), "in a tool result")}
        out.append(block)
    return out


def _tool_result_block(message: Mapping[str, Any], notes: dict[str, int] | None) -> dict[str, Any]:
    """The ``tool_result`` block of a tool message, its error flag and marker carried over."""
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": str(message.get("tool_call_id") or ""),
        "content": _tool_result_content(message.get("content"), notes),
    }
    if message.get("_is_error"):
        result["is_error"] = True
    if message.get(TOOL_RESULT_MARKER) is not None:
        result[CACHE_CONTROL] = message[TOOL_RESULT_MARKER]
    return result


def _kept_blocks(message: Mapping[str, Any], originals: Any, notes: dict[str, int] | None) -> list[dict[str, Any]]:
    """The original blocks an assistant message kept, the layout's marker on the last block
    that is not thinking (a signed thinking block must go back byte-identical)."""
    marker = layout_marker(message)
    blocks = list(sendable_blocks(originals, notes))
    if marker is not None:
        for i in range(len(blocks) - 1, -1, -1):
            if takes_marker(blocks[i]):
                blocks[i] = {**blocks[i], CACHE_CONTROL: marker}
                break
    return blocks


def _converted_blocks(message: Mapping[str, Any], role: Any, notes: dict[str, int] | None) -> list[dict[str, Any]]:
    """The blocks of a message without kept originals: its content, refusal and tool calls
    converted, what changed counted in ``notes``."""
    content = message.get("content")
    part_role = "assistant" if role == "assistant" else "user"
    if role not in ("assistant", "user"):
        note(notes, f"converted:{role} message in the history -> user text")
    if message.get("name"):  # the Messages API has no participant names
        note(notes, "dropped:name of a message")
    blocks: list[dict[str, Any]] = []
    if isinstance(content, str):
        if content:
            blocks.append({"type": "text", "text": content})
    elif isinstance(content, (list, dict)):
        for part in content if isinstance(content, list) else [content]:
            block = anthropic_part(part, part_role, notes)
            if block is not None:
                blocks.append(block)
    if role == "assistant":
        blocks.extend(_assistant_extras(message, notes))
    blocks.extend(_tool_use_blocks(message.get("tool_calls"), notes))
    return blocks


def _assistant_extras(message: Mapping[str, Any], notes: dict[str, int] | None) -> list[dict[str, Any]]:
    """Text blocks for what an OpenAI assistant message says outside its content: an audio
    reply (its transcript, or a placeholder), a refusal; its annotations (URL citations of its
    text) are dropped, counted: the text stays, the Messages API takes no citations of ours."""
    blocks: list[dict[str, Any]] = []
    audio = audio_reply_text(message)
    if audio is not None:
        kind, text = audio
        note(notes, "converted:audio reply -> its transcript" if kind == "converted" else "placeholder:audio reply")
        blocks.append({"type": "text", "text": text})
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal:
        note(notes, "converted:refusal -> text block")
        blocks.append({"type": "text", "text": refusal})
    annotations = message.get("annotations")
    if isinstance(annotations, list) and annotations:
        note(notes, "dropped:annotations of an assistant message", len(annotations))
    return blocks


def _tool_use_blocks(calls: Any, notes: dict[str, int] | None) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of an assistant message's calls (a call that is no mapping skipped)."""
    blocks: list[dict[str, Any]] = []
    for call in calls or ():
        if not isinstance(call, Mapping):
            continue
        kind, name, arguments = tool_call_fields(call)
        if kind == "custom":  # free text, as the tool definition's one "input" property
            note(notes, "converted:custom tool call -> tool_use {\"input\": text}")
            tool_input: Any = {"input": arguments if isinstance(arguments, str) else (
                "" if arguments is None else arguments_text(arguments))}
        else:
            tool_input = _tool_input(arguments, notes)
        blocks.append({"type": "tool_use", "id": str(call.get("id") or call.get("call_id") or ""),
                       "name": name, "input": tool_input})
    return blocks


def anthropic_blocks(message: Mapping[str, Any], notes: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The Anthropic content blocks of one canonical message, markers carried over.

    An assistant message that keeps its original blocks (``_anthropic_content``, still matching
    its text and calls) sends exactly those: thinking and redacted thinking with their
    signatures, in their order. OpenAI parts are converted (``hermes_core.conversion``), and
    what converts, is replaced or dropped is counted in ``notes``. A layout's marker (top-level,
    or on the last part of a marked copy) lands on the last block that can carry one.
    """
    role = message.get("role")
    if LEGACY_FUNCTION in message:
        note(notes, _LEGACY_NOTE)
    if role == "tool":
        blocks = [_tool_result_block(message, notes)]
    else:
        originals = original_blocks(message) if ANTHROPIC_CONTENT in message else None
        if originals is not None:
            return _kept_blocks(message, originals, notes)
        if ANTHROPIC_CONTENT in message:
            _note_stale(message, notes)
        blocks = _converted_blocks(message, role, notes)
    marker = message.get(CACHE_CONTROL)
    if marker is not None and blocks:
        blocks[-1] = {**blocks[-1], CACHE_CONTROL: marker}
    if not blocks:  # the Messages API rejects an empty message: it is left out, counted
        note(notes, f"dropped:empty {role} message")
    return blocks


def to_anthropic(payload: Mapping[str, Any], notes: dict[str, int] | None = None, *,
                 laid: LaidOut | None = None) -> dict[str, Any]:
    """Keyword arguments for Anthropic's ``messages.create`` (add ``max_tokens`` yourself).

    Assistant ``tool_calls`` become ``tool_use`` blocks, consecutive ``tool`` messages one user
    message of ``tool_result`` blocks, and a system message inside the history a user text block
    (the Messages API has no system role there). What the conversion changed is counted in
    ``notes`` (``hermes_core.conversion``). ``laid``: as for ``to_openai``.
    """
    out: dict[str, Any] = {}
    if payload.get("model"):
        out["model"] = payload["model"]
    system = payload.get("system")
    if system:
        out["system"] = system
    laid_out = payload.get("messages") or []
    wire = None
    if laid is not None and type(laid_out) is list:
        wire = laid.history.anthropic_messages(laid_out, laid.changed(laid_out), notes)
    out["messages"] = wire if wire is not None else anthropic_messages(laid_out, notes)
    tools = payload.get("tools")
    if tools:
        out["tools"] = [_anthropic_tool(t) for t in tools]
    return out


def anthropic_messages(payload_messages: Sequence[Mapping[str, Any]],
                       notes: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """The Anthropic ``messages`` of canonical payload messages, built from scratch.

    Reused tool-call ids are renamed (``hermes_core.wire_ids.IdRenamer``): the Messages API
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

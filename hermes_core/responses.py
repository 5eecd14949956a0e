"""The OpenAI Responses API request: canonical messages out as ``input`` items.

``responses_input`` sends a Responses-born message's items back byte-identical while no pass
changed it and rebuilds only what changed; what could not be sent as it was is counted in a
``Conversion`` (``not_sent_elsewhere``: what Chat or Anthropic requests leave out). ``InputCache``
and ``LeftOutCounter`` cost only the new messages. Nothing here recurses on the data.
"""


from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import attrs

from hermes_core.conversion import (
    ANTHROPIC_BLOCKS,
    ANTHROPIC_CONTENT,
    has_lone_surrogate,
    openai_part,
    openai_text_of_blocks,
    original_blocks,
    surrogates_escaped,
)
from hermes_core.messages import LEGACY_FUNCTION, audio_reply_text, tool_call_fields
from hermes_core.responses_items import (
    CALL_OUTPUT,
    ORIGINAL_KEY,
    OUTPUTS,
    PART_TYPES,
    assistant_message,
    call_id_of,
    canonical_messages,
    dumps,
    placeholder,
    tool_call,
)
from hermes_core.wire_ids import IdRenamer, anthropic_ids

__all__ = [
    "Conversion",
    "InputCache",
    "LeftOutCounter",
    "ResponsesMemory",
    "not_sent_elsewhere",
    "responses_input",
    "responses_kwargs",
    "responses_tool",
]

@attrs.define(kw_only=True)
class Conversion:
    """What a conversion could not carry over as it was, counted by kind."""

    counts: dict[str, int] = attrs.field(factory=dict)

    def add(self, kind: str, n: int = 1) -> None:
        if n:
            self.counts[kind] = self.counts.get(kind, 0) + n

    def describe(self) -> str:
        return ", ".join(f"{kind.replace('_', ' ')}: {n}" for kind, n in sorted(self.counts.items()))


def _public(message: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k[:1] != "_"}


def _unchanged(message: Mapping[str, Any], originals: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``message`` still says what its original items say (no pass changed it)."""
    projected = canonical_messages(originals, lambda x: x)
    return len(projected) == 1 and _public(projected[0]) == _public(message)


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n\n".join(str(p.get("text") or "") for p in content
                           if isinstance(p, Mapping) and p.get("type") in ("text", "input_text",
                                                                            "output_text"))
    return ""


def _input_part(part: Any, conversion: Conversion) -> dict[str, Any] | None:
    """A Chat part or an Anthropic block as a Responses input part."""
    if isinstance(part, str):
        return {"type": "input_text", "text": part}
    if not isinstance(part, Mapping):
        return None
    kind = part.get("type") if isinstance(part.get("type"), str) else "untyped"  # a list: unhashable
    if kind in PART_TYPES:
        return dict(part)
    if kind == "text":
        return {"type": "input_text", "text": str(part.get("text") or "")}
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        detail = image.get("detail") if isinstance(image, Mapping) else None
        return {"type": "input_image", "image_url": str(url or ""),
                "detail": detail if detail in ("low", "high", "auto") else "auto"}
    if kind == "image":  # Anthropic: base64 source to a data URL, URL source to the URL
        source = part.get("source")
        if isinstance(source, Mapping) and source.get("type") == "base64":
            return {"type": "input_image", "detail": "auto",
                    "image_url": f"data:{source.get('media_type')};base64,{source.get('data')}"}
        if isinstance(source, Mapping) and source.get("type") == "url":
            return {"type": "input_image", "detail": "auto", "image_url": str(source.get("url"))}
    if kind == "file" and isinstance(part.get("file"), Mapping):
        return {"type": "input_file", **{k: v for k, v in part["file"].items()
                                          if k in ("file_id", "file_data", "filename")}}
    if kind in ANTHROPIC_BLOCKS and kind not in ("image", "text"):
        # A document, a search result, a server-tool block: what Chat makes of it (its text, a
        # PDF as a file, else a placeholder that says what it was), losses counted.
        notes: dict[str, int] = {}
        chat = openai_part(part, "user", notes)
        _add_losses(conversion, notes)
        if chat is not None and chat.get("type") != "text":
            return _input_part(chat, conversion)
        return {"type": "input_text", "text": str(chat.get("text") or "")} if chat else None
    conversion.add(f"{kind}_parts_replaced_by_placeholders")
    return {"type": "input_text", "text": f"[{kind} omitted]"}


def _add_losses(conversion: Conversion, notes: Mapping[str, int]) -> None:
    """The placeholders and drops of a ``hermes_core.conversion`` note set, as counts (a
    conversion that keeps the meaning is no loss)."""
    for key, n in notes.items():  # "placeholder:web_search_tool_result" ...
        if not key.startswith("converted:"):
            conversion.add(re.sub(r"\W+", "_", key).strip("_"), n)


def _input_content(content: Any, conversion: Conversion) -> Any:
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = [p for p in (_input_part(part, conversion) for part in content) if p is not None]
    return parts


def _function_call(call: Mapping[str, Any]) -> dict[str, Any]:
    kind, name, arguments = tool_call_fields(call)
    ident = str(call.get("id") or call.get("call_id") or "")
    if kind == "custom":  # a Chat custom tool call: the Responses API's own custom call
        return {"type": "custom_tool_call", "call_id": ident, "name": name,
                "input": arguments if isinstance(arguments, str) else (
                    "" if arguments is None else dumps(arguments))}
    if not isinstance(arguments, str):
        arguments = dumps(arguments if arguments is not None else {})
    return {"type": "function_call", "call_id": ident, "name": name, "arguments": arguments}


def _output_item(message: Mapping[str, Any], conversion: Conversion,
                 original: Mapping[str, Any] | None = None, custom: bool = False) -> dict[str, Any]:
    content = message.get("content")
    output: Any
    if isinstance(content, list):
        parts = [p for p in (_input_part(part, conversion) for part in content) if p is not None]
        output = parts if any(p["type"] != "input_text" for p in parts) else \
            "\n\n".join(p["text"] for p in parts)
    else:
        output = "" if content is None else str(content)
    if message.get("_is_error"):
        # The Responses API has no error flag on an output: the model reads it in the text.
        if isinstance(output, str):
            output = "[tool error] " + output
        else:
            output = [{"type": "input_text", "text": "[tool error]"}, *output]
        conversion.add("error_flags_written_into_the_output")
    kind = original.get("type") if original is not None else (
        "custom_tool_call_output" if custom else "function_call_output")
    if kind == "local_shell_call_output" and original is not None:
        return {"type": kind, "id": original.get("id"), "output": _text_of(content) or str(output)}
    if kind not in ("function_call_output", "custom_tool_call_output", "shell_call_output",
                    "apply_patch_call_output"):
        kind = "function_call_output"
    if kind != "function_call_output" and not isinstance(output, str):
        output = _text_of(content)
    return {"type": kind, "call_id": str(message.get("tool_call_id") or ""), "output": output}


def _kept_call(item: Mapping[str, Any], call: Mapping[str, Any]) -> Mapping[str, Any]:
    """The original call item of a call the turn still makes: as it was when the call is
    unchanged (or not a function/custom call), else rebuilt from ``call`` under its id."""
    kind = item.get("type")
    if tool_call(item) == (call if call.get("type") == "custom" else {**call, "type": "function"}) or (
            kind not in ("function_call", "custom_tool_call")):
        return item
    rebuilt = _function_call(call)
    if kind == "custom_tool_call" and rebuilt["type"] == "function_call":  # a pass rebuilt it so
        rebuilt = {"type": kind, "call_id": call_id_of(item), "name": rebuilt["name"],
                   "input": rebuilt["arguments"]}
    if item.get("id"):
        rebuilt["id"] = item["id"]
    return rebuilt


def _rebuilt_turn(message: Mapping[str, Any], originals: Sequence[Mapping[str, Any]],
                  conversion: Conversion) -> list[Mapping[str, Any]]:
    """A changed assistant turn: reasoning and server-side items as they were, what a pass
    changed (text, call arguments) from the message, calls it removed left out."""
    calls = {str(c.get("id") or ""): c for c in message.get("tool_calls") or ()
             if isinstance(c, Mapping)}
    text = _text_of(message.get("content"))
    for item in originals:
        if item.get("type") not in CALL_OUTPUT and item.get("role") != "assistant" \
                and item.get("type") != "reasoning":
            text = text.replace(placeholder(item), "")
    text = text.strip()
    out: list[Mapping[str, Any]] = []
    text_done = False
    seen: set[str] = set()
    original_text = _text_of(assistant_message(originals).get("content"))
    text_changed = _text_of(message.get("content")) != original_text
    for item in originals:
        kind = item.get("type")
        if kind in CALL_OUTPUT:
            ident = call_id_of(item)
            call = calls.get(ident)
            if call is None:
                conversion.add("calls_removed_by_compaction")
                continue
            seen.add(ident)
            out.append(_kept_call(item, call))
        elif item.get("role") == "assistant":
            if not text_changed:
                out.append(item)
            elif not text_done:
                text_done = True
                if text:
                    out.append({"role": "assistant", "content": text})
        else:
            out.append(item)
    if text_changed and not text_done and text:
        out.append({"role": "assistant", "content": text})
    for ident, call in calls.items():
        if ident not in seen:
            out.append(_function_call(call))
    return out


def _from_chat(message: Mapping[str, Any], conversion: Conversion,
               custom: bool = False) -> list[Mapping[str, Any]]:
    """A message of Chat or Anthropic origin as Responses items (``custom``: a tool message
    that answers a custom tool call, whose output item must say so)."""
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        return [_output_item(message, conversion, custom=custom)]
    if message.get("name"):  # Responses input messages have no participant names
        conversion.add("message_names_dropped")
    if role == "assistant":
        out: list[Mapping[str, Any]] = []
        # Another vendor's (or Chat's) reasoning has no encrypted form the API takes: a
        # ``_reasoning`` text or thinking blocks kept in the content are dropped, and counted.
        blocks = original_blocks(message) if ANTHROPIC_CONTENT in message else None
        kept = blocks if blocks is not None else content
        thinking = sum(1 for p in kept if isinstance(p, Mapping) and p.get("type") in (
            "thinking", "redacted_thinking")) if isinstance(kept, list) else 0
        if thinking or message.get("_reasoning"):
            conversion.add("reasoning_of_another_api_dropped", max(thinking, 1))
        text = content if isinstance(content, str) else _text_of(content)
        if blocks is not None:  # an Anthropic reply: server-tool blocks shown where they stood
            notes: dict[str, int] = {}
            text = openai_text_of_blocks(blocks, notes, thinking=False)
            _add_losses(conversion, notes)
        if isinstance(content, list):
            others = [p for p in content if not (isinstance(p, Mapping) and p.get("type") in (
                "text", "output_text", "tool_use", "thinking", "redacted_thinking"))]
            if others:
                text = "\n\n".join([text, *(f"[{p.get('type') if isinstance(p, Mapping) else 'part'}"
                                            " omitted]" for p in others)]).strip()
                conversion.add("assistant_parts_replaced_by_placeholders", len(others))
        audio = audio_reply_text(message)
        if audio is not None:  # no audio from the assistant in the input: its words, or a placeholder
            conversion.add("audio_replies_as_transcripts" if audio[0] == "converted"
                           else "audio_replies_replaced_by_placeholders")
            text = "\n\n".join(t for t in (text, audio[1]) if t)
        if message.get("refusal"):
            text = "\n\n".join(t for t in (text, str(message["refusal"])) if t)
        annotations = message.get("annotations")
        if isinstance(annotations, list) and annotations:  # the text stays, its citations do not
            conversion.add("assistant_annotations_dropped", len(annotations))
        if text:
            out.append({"role": "assistant", "content": text})
        out.extend(_function_call(c) for c in message.get("tool_calls") or ()
                   if isinstance(c, Mapping))
        return out
    role = role if role in ("user", "system", "developer") else "user"
    return [{"role": role, "content": _input_content(content, conversion)}]


def _follows_reasoning(item: Mapping[str, Any]) -> bool:
    """Whether ``item`` can be the item a reasoning item precedes (an output of the turn)."""
    kind = item.get("type")
    if item.get("role") is not None:
        return item.get("role") == "assistant"
    return kind not in OUTPUTS and kind not in ("mcp_approval_response", "item_reference") \
        and kind != "reasoning"


def _drop_dangling_reasoning(
    items: list[Mapping[str, Any]], conversion: Conversion, *, keep_tail: bool = False
) -> list[Mapping[str, Any]]:
    """Reasoning items with no item of their turn after them (the API refuses those);
    ``keep_tail``: a run at the end stays (what follows it is decided where it is joined)."""
    out: list[Mapping[str, Any]] = []
    pending: list[Mapping[str, Any]] = []
    for item in items:
        if item.get("type") == "reasoning":
            pending.append(item)
            continue
        if pending:
            if _follows_reasoning(item):
                out.extend(pending)
            else:
                conversion.add("reasoning_items_without_a_following_item_dropped", len(pending))
            pending = []
        out.append(item)
    if keep_tail:
        out.extend(pending)
    else:
        conversion.add("reasoning_items_without_a_following_item_dropped", len(pending))
    return out


def _renamed(items: list[Mapping[str, Any]], message: Mapping[str, Any], ids: Any,
             conversion: Conversion) -> list[Mapping[str, Any]]:
    """``items`` with the call ids ``IdRenamer`` gave a reused id (``anthropic_ids``: a list
    for an assistant's calls, in ``tool_calls`` order, a str for a result)."""
    if ids is None:
        return items
    if isinstance(ids, str):
        key = "id" if items and items[0].get("type") == "local_shell_call_output" else "call_id"
        conversion.add("reused_call_ids_renamed")
        return [{**item, key: ids} if item.get("type") in OUTPUTS else item for item in items]
    queues: dict[str, list[str]] = {}
    for call, new in zip(message.get("tool_calls") or (), ids):
        old = str(call.get("id") or call.get("call_id") or "") if isinstance(call, Mapping) else ""
        queues.setdefault(old, []).append(new)
    out: list[Mapping[str, Any]] = []
    for item in items:
        queue = queues.get(str(item.get("call_id") or "")) if item.get("type") in CALL_OUTPUT else None
        if queue:
            new = queue.pop(0)
            if new != item.get("call_id"):
                conversion.add("reused_call_ids_renamed")
                item = {**item, "call_id": new}
        out.append(item)
    return out


def message_items(
    message: Mapping[str, Any], wire: Mapping[str, Any] | None = None, ids: Any = None,
    custom: bool = False,
) -> tuple[list[Mapping[str, Any]], dict[str, int]]:
    """The Responses items of one canonical message (``wire``: its canonical payload form) and
    what they could not carry; a trailing reasoning run is left for ``join_items`` to judge.
    ``ids``: the renamed call ids of a reused id (``hermes_core.wire_ids.anthropic_ids``): two
    calls with one ``call_id`` make the pairing ambiguous, so a repeated one is renamed.
    ``custom``: a tool message answering a custom tool call (``answers_custom``)."""
    conversion = Conversion()
    if LEGACY_FUNCTION in message:
        conversion.add("deprecated_function_calls_and_results_converted")
    wire = message if wire is None else wire
    originals = message.get(ORIGINAL_KEY)
    if isinstance(originals, list) and originals:
        if _unchanged(message, originals):
            items: list[Mapping[str, Any]] = list(originals)
        else:
            conversion.add("changed_messages_rebuilt")
            if message.get("role") == "assistant":
                items = _rebuilt_turn(message, originals, conversion)
            elif message.get("role") == "tool":
                items = [_output_item(message, conversion, originals[0])]
            else:
                items = _from_chat({**wire, "_reasoning": None}, conversion)
    else:
        items = _from_chat({**wire, **{k: v for k, v in message.items() if k[:1] == "_"}},
                           conversion, custom)
    items = _renamed(items, message, ids, conversion)
    if any(has_lone_surrogate(item) for item in items):
        # An item kept as it came may hold a lone surrogate no encoder takes: written as
        # \udNNN text, counted (as the Chat and Anthropic requests do, hermes_core.payload).
        fixed = [surrogates_escaped(item) for item in items]
        items = [item for item, _count in fixed]
        conversion.add("lone_surrogates_escaped", sum(count for _item, count in fixed))
    return _drop_dangling_reasoning(items, conversion, keep_tail=True), conversion.counts


def _after(per_message: Sequence[tuple[list[Mapping[str, Any]], dict[str, int]]],
           index: int) -> Mapping[str, Any] | None:
    """The first item after message ``index`` (the next message with items, usually the next)."""
    for later in range(index + 1, len(per_message)):
        if per_message[later][0]:
            return per_message[later][0][0]
    return None


def _trailing_dropped(items: list[Mapping[str, Any]], after: Mapping[str, Any] | None) -> int:
    """How many reasoning items at the end of ``items`` have nothing they may precede."""
    if not items or items[-1].get("type") != "reasoning":
        return 0
    if after is not None and _follows_reasoning(after):
        return 0
    cut = len(items)
    while cut and items[cut - 1].get("type") == "reasoning":
        cut -= 1
    return len(items) - cut


def join_items(
    per_message: Sequence[tuple[list[Mapping[str, Any]], dict[str, int]]],
) -> tuple[list[Mapping[str, Any]], Conversion]:
    """One ``input`` list of the messages' items: a message's trailing reasoning goes only
    when the next item can follow it (else dropped and counted); the counts summed."""
    conversion = Conversion()
    out: list[Mapping[str, Any]] = []
    for index, (items, counts) in enumerate(per_message):
        for kind, count in counts.items():
            conversion.add(kind, count)
        dropped = _trailing_dropped(items, _after(per_message, index))
        conversion.add("reasoning_items_without_a_following_item_dropped", dropped)
        out.extend(items[:len(items) - dropped] if dropped else items)
    return out, conversion


def responses_input(
    messages: Sequence[Mapping[str, Any]],
    canonical: Sequence[Mapping[str, Any]] | None = None,
) -> tuple[list[Mapping[str, Any]], Conversion]:
    """``input`` items for ``client.responses.create`` and what could not go as it was.

    ``messages``: the canonical history (with its ``_`` keys). ``canonical``: the same messages
    as the payload put them on the wire (``hermes_core.payload.canonical_message``: trimmed,
    sorted arguments), used for what is not sent back as its original items; by default the
    messages themselves. A message born of Responses items that no pass changed goes back as
    those items, byte-identical.
    """
    renamer = IdRenamer(sanitize=False)
    return join_items([
        message_items(message, canonical[index] if canonical is not None else None,
                      anthropic_ids(message, index, renamer)[0], answers_custom(messages, index))
        for index, message in enumerate(messages)
    ])


def answers_custom(messages: Sequence[Mapping[str, Any]], index: int) -> bool:
    """Whether ``messages[index]`` is a tool message answering a ``custom`` tool call of the
    assistant message its block of results follows (the pairing rule: results come right after
    their calls), whose output the Responses API takes as ``custom_tool_call_output`` only."""
    message = messages[index]
    if message.get("role") != "tool":
        return False
    j = index - 1
    while j >= 0 and messages[j].get("role") == "tool":
        j -= 1
    if j < 0 or messages[j].get("role") != "assistant":
        return False
    ident = message.get("tool_call_id")
    calls = messages[j].get("tool_calls")
    return type(calls) is list and any(
        isinstance(c, Mapping) and c.get("type") == "custom" and c.get("id") == ident for c in calls)


class InputCache:
    """``responses_input`` of a history that grows turn by turn, at the cost of the new
    messages: each message's items - and the joined ``input`` up to it - are kept while the
    message and its canonical form are the same objects (one C-level list comparison each)."""

    def __init__(self) -> None:
        self._seen: list[Any] = []
        self._wire: list[Any] = []
        self._items: list[tuple[list[Mapping[str, Any]], dict[str, int]]] = []
        self._renamer = IdRenamer(sanitize=False)
        self._undo: list[list[Any]] = []  # each message's renamer steps, to rewind them
        self._joined: list[Mapping[str, Any]] = []
        self._start: list[int] = []  # where each message's items begin in ``_joined``
        self._dropped: list[int] = []  # trailing reasoning items dropped at the join
        self._total: dict[str, int] = {}

    def _count(self, index: int, sign: int) -> None:
        counts = self._items[index][1]
        dropped = self._dropped[index]
        for kind, count in (*counts.items(),
                            ("reasoning_items_without_a_following_item_dropped", dropped)):
            total = self._total.get(kind, 0) + sign * count
            if total:
                self._total[kind] = total
            else:
                self._total.pop(kind, None)

    def build(
        self, messages: Sequence[Mapping[str, Any]], canonical: Sequence[Mapping[str, Any]] | None
    ) -> tuple[list[Mapping[str, Any]], Conversion]:
        wire = list(canonical) if canonical is not None else list(messages)
        k = min(_same_prefix(self._seen, messages), _same_prefix(self._wire, wire))
        # What follows message k-1 may have changed: its trailing reasoning is judged again
        # (and so is any earlier one whose next items were all after it).
        redo = k - 1 if k else 0
        while redo > 0 and not self._items[redo][0]:
            redo -= 1
        for index in range(redo, len(self._start)):
            self._count(index, -1)
        if redo < len(self._start):
            del self._joined[self._start[redo]:]
        del self._start[redo:], self._dropped[redo:]
        for log in reversed(self._undo[k:]):
            self._renamer.undo(log)
        del self._seen[k:], self._wire[k:], self._items[k:], self._undo[k:]
        for index in range(k, len(messages)):
            ids, undo = anthropic_ids(messages[index], index, self._renamer)
            self._seen.append(messages[index])
            self._wire.append(wire[index])
            self._undo.append(undo)
            self._items.append(message_items(messages[index], wire[index], ids,
                                             answers_custom(messages, index)))
        for index in range(redo, len(self._items)):
            items = self._items[index][0]
            dropped = _trailing_dropped(items, _after(self._items, index))
            self._start.append(len(self._joined))
            self._dropped.append(dropped)
            self._joined.extend(items[:len(items) - dropped] if dropped else items)
            self._count(index, 1)
        return list(self._joined), Conversion(counts=dict(self._total))


def _same_prefix(seen: list[Any], messages: Sequence[Any]) -> int:
    """How many leading entries of ``seen`` are ``messages``' (by identity): all of them in
    one list comparison when the list only grew, else counted one by one."""
    m, n = len(seen), len(messages)
    if n >= m:
        seen.extend(messages[m:])
        same = seen == messages
        del seen[m:]
        if same:
            return m
    for i in range(min(m, n)):
        if seen[i] is not messages[i]:
            return i
    return min(m, n)


def not_sent_elsewhere(messages: Sequence[Mapping[str, Any]]) -> Conversion:
    """What a Chat or Anthropic request leaves out of Responses-born messages: reasoning items
    (encrypted, for OpenAI's Responses API alone) and server-side items, which reach the
    model as their placeholder line only."""
    conversion = Conversion()
    for message in messages:
        originals = message.get(ORIGINAL_KEY) if type(message) is dict else None
        if not originals:
            continue
        for item in originals:
            kind = item.get("type") if isinstance(item, Mapping) and isinstance(item.get("type"), str) else None
            if kind == "reasoning":
                conversion.add("reasoning_items_dropped")
            elif kind in OUTPUTS:
                output = item.get("output")
                if isinstance(output, Mapping):  # a screenshot: Chat tool content is text
                    conversion.add("parts_replaced_by_placeholders")
                elif isinstance(output, list):
                    conversion.add("parts_replaced_by_placeholders", sum(
                        1 for p in output if not (isinstance(p, Mapping)
                                                  and p.get("type") in ("input_text", "output_text"))))
            elif kind is not None and kind not in CALL_OUTPUT and kind != "message" \
                    and item.get("role") is None:
                conversion.add("server_side_items_replaced_by_placeholders")
            elif isinstance(item.get("content"), list):
                conversion.add("parts_replaced_by_placeholders", sum(
                    1 for p in item["content"] if not _has_chat_form(p)))
    return conversion


def _has_chat_form(part: Any) -> bool:
    """Whether a Responses content part has a Chat equivalent (``chat_part`` gives more than
    a placeholder line)."""
    if not isinstance(part, Mapping):
        return True
    kind = part.get("type")
    if kind == "input_image":
        return isinstance(part.get("image_url"), str)
    if kind == "input_file":
        return bool(part.get("file_id") or part.get("file_data"))
    return kind in ("input_text", "output_text", "refusal")


# --- tools -------------------------------------------------------------------------------------


def responses_tool(tool: Any) -> Any:
    """A tool definition in the Responses function shape. Chat and Anthropic definitions are
    converted (``strict`` false unless the definition asks for it: the Responses API would
    otherwise enforce strict schemas by default); Responses and built-in tools pass."""
    if not isinstance(tool, Mapping):
        return tool
    fn = tool.get("function")
    if isinstance(fn, Mapping):
        name, description, parameters = fn.get("name"), fn.get("description"), fn.get("parameters")
        strict = fn.get("strict")
    elif "input_schema" in tool:
        name, description, parameters = tool.get("name"), tool.get("description"), tool.get("input_schema")
        strict = tool.get("strict")
    elif tool.get("type") == "function":
        return {k: tool[k] for k in ("type", "name", "description", "parameters", "strict")
                if k in tool}
    elif tool.get("type") == "custom" and isinstance(tool.get("custom"), Mapping):
        # Chat nests a custom tool's fields under "custom"; the Responses API takes them flat.
        return {"type": "custom", **{k: v for k, v in tool["custom"].items()
                                     if k in ("name", "description", "format")}}
    else:
        return tool  # a built-in tool (web_search, file_search, mcp, custom ...)
    out: dict[str, Any] = {"type": "function", "name": str(name or "")}
    if description:
        out["description"] = description
    out["parameters"] = parameters if isinstance(parameters, Mapping) else {
        "type": "object", "properties": {}}
    out["strict"] = bool(strict)
    return out


# --- the request --------------------------------------------------------------------------------


def responses_kwargs(
    payload: Mapping[str, Any],
    messages: Sequence[Mapping[str, Any]],
    *,
    max_output_tokens: int | None = None,
    cache: InputCache | None = None,
) -> tuple[dict[str, Any], Conversion]:
    """Keyword arguments for ``client.responses.create`` and what the conversion counted.

    ``payload``: the canonical payload with its cache layout (``hermes_core.payload``), whose
    ``system`` becomes ``instructions``, ``tools`` the Responses function shape, and whose
    ``prompt_cache_key`` is kept; ``messages``: the canonical history the payload was built
    from (with its ``_`` keys; a leading system message the payload took as its system text
    is skipped), whose items become ``input`` (through ``cache``, a session's ``InputCache``,
    when given).
    """
    wire = list(payload.get("messages") or ())
    offset = len(messages) - len(wire)
    aligned = wire if offset in (0, 1) else None
    own = messages[offset:] if aligned is not None else messages
    items, conversion = (cache.build(own, aligned) if cache is not None
                         else responses_input(own, aligned))
    out: dict[str, Any] = {}
    if payload.get("model"):
        out["model"] = payload["model"]
    system = payload.get("system")
    if isinstance(system, list):  # a layout that marked it in blocks: the text is what counts
        system = "\n\n".join(str(b.get("text") or "") for b in system if isinstance(b, Mapping))
    if system:
        out["instructions"] = system
    out["input"] = items
    tools = payload.get("tools")
    if tools:
        out["tools"] = [responses_tool(t) for t in tools]
    if payload.get("prompt_cache_key"):
        out["prompt_cache_key"] = payload["prompt_cache_key"]
    if max_output_tokens:
        out["max_output_tokens"] = int(max_output_tokens)
    return out, conversion


class SyncedCache(Protocol):
    """What the counter reads of the session's message cache (``history.ProcessedHistory``,
    which stands on this module)."""

    @property
    def src(self) -> Sequence[Any]: ...
    def take_low_water(self) -> int: ...


class LeftOutCounter:
    """``not_sent_elsewhere`` of a history that grows turn by turn, at the cost of the new
    messages. ``update(messages, unchanged)``: ``unchanged`` leading messages are known to be the
    ones counted last time (the message cache's low-water mark tells); ``None`` compares them
    by identity (``_same_prefix``)."""

    def __init__(self) -> None:
        self._seen: list[Any] = []
        self._each: list[dict[str, int] | None] = []
        self._counts: dict[str, int] = {}
        #: Whether the last counted list was the message cache's synced list (its low-water
        #: mark then tells what changed since).
        self.follows_cache = False

    def _add(self, each: dict[str, int] | None, sign: int) -> None:
        for kind, count in (each or {}).items():
            total = self._counts.get(kind, 0) + sign * count
            if total:
                self._counts[kind] = total
            else:
                self._counts.pop(kind, None)

    def update(self, messages: Sequence[Mapping[str, Any]], unchanged: int | None = None) -> dict[str, int]:
        seen = self._seen
        k = min(unchanged, len(seen), len(messages)) if unchanged is not None else _same_prefix(seen, messages)
        for each in self._each[k:]:
            self._add(each, -1)
        del seen[k:], self._each[k:]
        for message in messages[k:]:
            seen.append(message)
            counts = not_sent_elsewhere((message,)).counts or None
            self._each.append(counts)
            self._add(counts, 1)
        return dict(self._counts)

    def update_after_sync(self, messages: Sequence[Mapping[str, Any]], cache: SyncedCache) -> dict[str, int]:
        """``update`` right after a request synced ``cache`` (the session's message cache)
        with ``messages``: its low-water mark says which messages it (re)processed since."""
        src = cache.src
        # build_request syncs this list whenever there is a system text; the ends are checked
        # in case it did not.
        synced = len(src) == len(messages) and (
            not messages or (src[0] is messages[0] and src[-1] is messages[-1]))
        low = cache.take_low_water()
        # The mark speaks of the counted list only when the last count's list was the cache's
        # too; otherwise one comparison decides.
        trusted = synced and self.follows_cache
        self.follows_cache = synced
        return self.update(messages, low if trusted else None)


class ResponsesMemory:
    """What a session keeps between requests for the Responses API's sake: the input built so
    far (``InputCache``), the count of what other requests leave out (``LeftOutCounter``), and
    the counts last reported, so that each is said once per change, not once per turn."""

    def __init__(self) -> None:
        self.inputs = InputCache()
        self.left_out = LeftOutCounter()
        self._said: dict[str, dict[str, int]] = {}

    def news(self, kind: str, counts: Mapping[str, int]) -> bool:
        """Whether ``counts`` of ``kind`` are worth a warning: non-empty and not the last said."""
        if not counts or counts == self._said.get(kind):
            return False
        self._said[kind] = dict(counts)
        return True

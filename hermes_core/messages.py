"""Helpers for OpenAI-format message lists: parsing, validating, the text of any content, and
the Chat shapes other targets read specially (custom tool calls, audio replies, deprecated
function calling: docs/message-model.md, "OpenAI Chat shapes, end to end").

These run over whole histories, so they stay plain functions over dicts (no records, no copies).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_core import bounded
from hermes_core.errors import InvalidMessagesError
from hermes_core.text_repair import decode_problem, escape_surrogates_of

ROLES = frozenset({"system", "user", "assistant", "tool", "developer", "function"})


def read_transcript_text(path: str | Path) -> str:
    """A transcript file's text; an unreadable or non-UTF-8 file is an ``InvalidMessagesError``
    naming it."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidMessagesError(decode_problem(p, exc)) from None
    except OSError as exc:
        raise InvalidMessagesError(f"{p}: cannot read transcript: {exc.strerror or exc}") from None


def parse_transcript(text: str, *, source: str = "<input>") -> list[dict[str, Any]]:
    """Parse a JSON array (or ``{"messages": [...]}``) or JSONL text of messages."""
    stripped = text.strip()
    if not stripped:
        raise InvalidMessagesError(f"{source}: empty transcript")
    messages: Any
    if stripped[0] in "[{":
        try:
            messages = bounded.loads(stripped)
        except bounded.TooDeepError:
            raise InvalidMessagesError(
                f"{source}: JSON nested more than {bounded.MAX_DEPTH} levels deep "
                "(refused rather than risk the stack)"
            ) from None
        except json.JSONDecodeError as exc:
            if stripped[0] == "{":
                messages = _parse_jsonl(stripped, source)
            else:
                raise InvalidMessagesError(
                    f"{source}: not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
                ) from None
        else:
            if isinstance(messages, dict):
                messages = messages.get("messages", [messages]) if "role" not in messages else [messages]
    else:
        raise InvalidMessagesError(f"{source}: not JSON: expected an array or JSON lines")
    if not isinstance(messages, list):
        raise InvalidMessagesError(f"{source}: expected a JSON array of messages")
    validate_messages(messages)
    return escape_surrogates_of(stripped, messages)  # type: ignore[no-any-return]


def _parse_jsonl(text: str, source: str) -> list[Any]:
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):  # \n only, as JSON Lines (not U+2028)
        if not line.strip():
            continue
        try:
            out.append(bounded.loads(line))
        except bounded.TooDeepError:
            raise InvalidMessagesError(
                f"{source}: line {lineno} is nested more than {bounded.MAX_DEPTH} levels deep"
            ) from None
        except json.JSONDecodeError as exc:
            raise InvalidMessagesError(f"{source}: line {lineno} is not JSON: {exc.msg}") from None
    return out


def validate_messages(messages: Sequence[Any], start: int = 0, *, roles: bool = True) -> None:
    """Raise ``InvalidMessagesError`` naming the first malformed message's index (``start``: the
    index of ``messages[0]`` in the caller's list). ``roles=False``: a missing or unknown role
    passes (the Session sends such a message as user text, counted in its request report)."""
    for index, message in enumerate(messages, start):
        if not isinstance(message, Mapping):
            raise InvalidMessagesError(
                f"message {index}: expected an object, got {type(message).__name__}", index=index
            )
        role = message.get("role")
        if roles and (not isinstance(role, str) or not role):
            raise InvalidMessagesError(f"message {index}: has no role", index=index)
        if roles and role not in ROLES:
            raise InvalidMessagesError(f"message {index}: unknown role {role!r}", index=index)
        calls = message.get("tool_calls")
        if calls is not None:
            if not isinstance(calls, list):
                raise InvalidMessagesError(
                    f"message {index}: tool_calls must be a list, got {type(calls).__name__}",
                    index=index,
                )
            for j, call in enumerate(calls):
                if not isinstance(call, Mapping):
                    raise InvalidMessagesError(
                        f"message {index}: tool_calls[{j}] must be an object", index=index
                    )
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list, dict)):
            raise InvalidMessagesError(
                f"message {index}: content must be a string, a list or null", index=index
            )


#: Part types whose ``text`` a reader sees: OpenAI chat and Anthropic ``text``, Responses
#: ``input_text``/``output_text``. Images, audio, files, reasoning and tool calls hold none.
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


def content_text(content: Any, sep: str = "\n") -> str:
    """The text of a message ``content``, the one rule every reader of message text shares.

    ``None`` is ``""``; a string is itself; a list joins the text of its parts with ``sep``
    (a part with no text adds nothing, not an empty line). A part's text: a string part is
    itself; a text part (``type`` absent or in ``TEXT_PART_TYPES``) its ``text``; an Anthropic
    ``tool_result`` part the text of its nested ``content``, by this same rule; an image, audio,
    reasoning or tool-call part has none. SDK content blocks (objects, not dicts) are read
    through their ``type``/``text`` attributes. A content that is one part dict reads as that
    part (``text_summary`` is the compressor's placeholder for an image it dropped); any other
    value is its ``str``.
    """
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        texts = []
        for part in content:
            text = _part_text(part, sep)
            if text is not None:
                texts.append(text)
        return sep.join(texts)
    if isinstance(content, Mapping):
        text = _part_text(content, sep)
        summary = content.get("text_summary")
        return text or (summary if isinstance(summary, str) else "")
    return str(content)


def _part_text(part: Any, sep: str) -> str | None:
    if isinstance(part, str):
        return part
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "tool_result":
            return content_text(part.get("content"), sep)
        text = part.get("text")
    else:
        kind = getattr(part, "type", None)
        text = getattr(part, "text", None)
    # A ``type`` that is not a string (a damaged foreign file) names no text part.
    if (kind is None or (isinstance(kind, str) and kind in TEXT_PART_TYPES)) and isinstance(text, str):
        return text
    return None


def tool_call_fields(call: Any) -> tuple[str, str, Any]:
    """``(type, name, arguments)`` of one Chat tool call: a ``function`` call's name and
    ``arguments`` (JSON text, or an object a host holds), a ``custom`` call's name and ``input``
    (custom tools take free text, not JSON). Anything else reads as a function call with what
    its ``function`` holds (``("function", "", None)`` when nothing)."""
    if not isinstance(call, Mapping):
        return "function", "", None
    if call.get("type") == "custom":
        custom = call.get("custom")
        if isinstance(custom, Mapping):
            return "custom", str(custom.get("name") or ""), custom.get("input")
    fn = call.get("function")
    if not isinstance(fn, Mapping):
        return "function", "", None
    return "function", str(fn.get("name") or ""), fn.get("arguments")


def custom_tool_definition(custom: Mapping[str, Any], cache_control: Any = None) -> dict[str, Any]:
    """An OpenAI custom tool (``{"type": "custom", "custom": {...}}``: free-text input,
    optionally constrained by a grammar) as an Anthropic tool: one required string property
    ``input``, whose description states the grammar the model's text must follow (Anthropic
    cannot enforce one)."""
    prop: dict[str, Any] = {"type": "string"}
    fmt = custom.get("format")
    grammar = fmt.get("grammar") if isinstance(fmt, Mapping) else None
    if isinstance(grammar, Mapping) and isinstance(grammar.get("definition"), str):
        syntax = grammar.get("syntax")
        label = f"{syntax} grammar" if isinstance(syntax, str) and syntax else "grammar"
        prop["description"] = f"Text in this {label}:\n{grammar['definition']}"
    out: dict[str, Any] = {
        "name": str(custom.get("name") or ""),
        "input_schema": {"type": "object", "properties": {"input": prop}, "required": ["input"]},
    }
    if custom.get("description"):
        out["description"] = custom["description"]
    if cache_control is not None:
        out["cache_control"] = cache_control
    return out


#: Set on a message converted from the deprecated function-calling form (an assistant's
#: ``function_call``, a ``role: "function"`` result) so that each request counts it.
LEGACY_FUNCTION = "_legacy_function"
#: How many messages before a deprecated ``function_call`` its id depends on (``legacy_call_id``).
LEGACY_CONTEXT = 4


def legacy_call_id(name: str, arguments: Any, before: Sequence[Any] = ()) -> str:
    """The tool-call id given to a deprecated ``function_call``, which has none: a hash of its
    name, its arguments and the ``LEGACY_CONTEXT`` canonical messages before it (``before``; a
    converted call or result among them brings its own id), so that the same call made again
    later gets another id - OpenAI refuses a request with two calls of one id - and the same
    message converts to the same id on every turn. At most 40 characters of
    ``A-Z a-z 0-9 _ -`` (OpenAI's and Anthropic's limits)."""
    digest = hashlib.sha256()
    pieces = [name, arguments if isinstance(arguments, str) else repr(arguments)]
    pieces += [_fingerprint(m) for m in before[-LEGACY_CONTEXT:]]
    for piece in pieces:
        digest.update(piece.encode("utf-8", "surrogatepass") + b"\0")
    return "fn_" + digest.hexdigest()[:24]


def _fingerprint(message: Any) -> str:
    """What tells a message apart cheaply: its role, the ids it carries and (the start of) its
    text."""
    if not isinstance(message, Mapping):
        return ""
    ids = [str(c.get("id")) for c in message.get("tool_calls") or () if isinstance(c, Mapping)]
    text = content_text(message.get("content"))
    return "\1".join((str(message.get("role")), str(message.get("tool_call_id") or ""), *ids,
                      str(len(text)), text[:256]))


def is_legacy_function(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is in the deprecated function-calling form ``from_legacy_function``
    converts: a ``role: "function"`` result, or an assistant message with a ``function_call``
    object (an SDK dump's ``"function_call": null`` is not one)."""
    return message.get("role") == "function" or isinstance(message.get("function_call"), Mapping)


def from_legacy_function(message: Mapping[str, Any], before: Sequence[Any] = ()) -> dict[str, Any]:
    """A message of the deprecated function-calling form in the tool-call form every pass and
    provider shares, meaning for meaning; marked ``LEGACY_FUNCTION`` for the request report.

    ``before``: the canonical messages before it, at least ``LEGACY_CONTEXT`` of them where
    there are (``normalize_messages`` passes them). An assistant's ``function_call`` becomes
    its last tool call (id ``legacy_call_id``). A ``function`` result (``name``, ``content``)
    answers the call right before it - the one call a legacy turn makes -: it becomes the
    ``tool`` message of that call's id when the message before it is such a converted call of
    its name. A result without one gets an id no call has, which the pairing check reports:
    nothing is invented for it.
    """
    if message.get("role") == "function":
        name = str(message.get("name") or "")
        ident = legacy_call_id(name, None, [message])
        previous = before[-1] if before else None
        calls = previous.get("tool_calls") if isinstance(previous, Mapping) and previous.get(
            LEGACY_FUNCTION) else None
        if isinstance(calls, list) and calls and isinstance(calls[-1], Mapping) and tool_call_fields(
                calls[-1])[1] == name:
            ident = str(calls[-1].get("id") or ident)
        out = {k: v for k, v in message.items() if k not in ("role", "name", "content")}
        content = message.get("content")
        out.update(role="tool", tool_call_id=ident, content="" if content is None else content)
    else:
        call = message["function_call"]
        name = str(call.get("name") or "")
        arguments = "" if call.get("arguments") is None else call["arguments"]
        out = {k: v for k, v in message.items() if k != "function_call"}
        calls = out.get("tool_calls")
        out["tool_calls"] = [*(calls if isinstance(calls, list) else ()), {
            "id": legacy_call_id(name, arguments, before), "type": "function",
            "function": {"name": name, "arguments": arguments}}]
    out[LEGACY_FUNCTION] = True
    return out


def audio_reply_text(message: Mapping[str, Any]) -> tuple[str, str] | None:
    """What an assistant's audio reply says as text, for a target that takes no audio from the
    assistant (Anthropic, the Responses API): ``("converted", transcript)`` when the host kept
    the reply's transcript (the response's whole ``audio`` object), else ``("placeholder",
    "[audio reply omitted: <id>]")``; ``None`` for a message without an ``audio`` object."""
    audio = message.get("audio")
    if not isinstance(audio, Mapping):
        return None
    transcript = audio.get("transcript")
    if isinstance(transcript, str) and transcript.strip():
        return "converted", transcript
    ident = audio.get("id")
    return "placeholder", f"[audio reply omitted: {ident}]" if isinstance(ident, str) and ident else \
        "[audio reply omitted]"

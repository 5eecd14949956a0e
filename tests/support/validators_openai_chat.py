"""A validator for OpenAI Chat Completions requests, written from OpenAI's documented rules.

Not a test file: tests import ``problems`` / ``check``. Rules (platform.openai.com API
reference, chat completions: message params and content parts):

* ``model`` a string; ``messages`` a non-empty list.
* Roles: ``system``, ``developer``, ``user``, ``assistant``, ``tool``.
* ``system`` / ``developer``: a non-empty string or a non-empty list of ``text`` parts.
* ``user``: a non-empty string or a non-empty list of parts: ``text`` (a string ``text``),
  ``image_url`` (``image_url.url`` an http(s) URL or a ``data:image/...;base64,`` URL),
  ``input_audio`` (``input_audio.data`` base64 and ``format`` wav or mp3), ``file`` (``file``
  with ``file_data`` or ``file_id``).
* ``assistant``: ``content`` a string, ``null`` or a list of ``text`` / ``refusal`` parts;
  ``null`` or empty only with ``tool_calls``, a ``refusal`` or an ``audio`` reply's ``id``;
  ``refusal`` a string;
  ``tool_calls`` a list of ``{"id", "type": "function", "function": {"name", "arguments"}}``
  with ``arguments`` a string, or of custom tool calls ``{"id", "type": "custom", "custom":
  {"name", "input"}}`` with ``input`` a string; ids unique in the request.
* ``tool``: a ``tool_call_id`` and a content that is a string or a list of ``text`` parts; it
  answers a call of the nearest assistant message before it with only tool messages between,
  and every call of an assistant message is answered before the next non-tool message.
* No Anthropic block types (``image``, ``document``, ``thinking``, ``tool_use``,
  ``tool_result`` ...), no key starting with ``_`` and no ``cache_control`` (``openrouter=True``
  allows it on text parts: OpenRouter forwards it to Anthropic models).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
USER_PARTS = frozenset({"text", "image_url", "input_audio", "file"})


def _part_problems(part: Any, role: str, at: str, openrouter: bool) -> list[str]:
    out: list[str] = []
    if not isinstance(part, Mapping):
        return [f"{at}: a part must be an object"]
    kind = part.get("type")
    allowed = USER_PARTS if role == "user" else (
        frozenset({"text", "refusal"}) if role == "assistant" else frozenset({"text"}))
    if kind not in allowed:
        return [f"{at}: part type {kind!r} not allowed for {role}"]
    extra = set(part) - {"type", kind, "text"} - ({"cache_control"} if openrouter and kind == "text" else set())
    if extra:
        out.append(f"{at}: unknown keys {sorted(extra)} on a {kind} part")
    if kind == "text" and not isinstance(part.get("text"), str):
        out.append(f"{at}: text part without text")
    elif kind == "refusal" and not isinstance(part.get("refusal"), str):
        out.append(f"{at}: refusal part without refusal")
    elif kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, Mapping) else None
        if not isinstance(url, str) or not (url.startswith(("http://", "https://"))
                                            or (url.startswith("data:image/") and ";base64," in url)):
            out.append(f"{at}: image_url needs an http(s) or base64 image data URL")
    elif kind == "input_audio":
        audio = part.get("input_audio")
        if not isinstance(audio, Mapping) or not isinstance(audio.get("data"), str) or audio.get(
                "format") not in ("wav", "mp3"):
            out.append(f"{at}: input_audio needs data and a wav/mp3 format")
    elif kind == "file":
        file = part.get("file")
        if not isinstance(file, Mapping) or not (file.get("file_data") or file.get("file_id")):
            out.append(f"{at}: file needs file_data or file_id")
    return out


def _keys(message: Mapping[str, Any], at: str, openrouter: bool) -> list[str]:
    out = [f"{at}: metadata key {k!r} on the wire" for k in message if k.startswith("_")]
    if "cache_control" in message:
        out.append(f"{at}: top-level cache_control")
    return out


def problems(request: Mapping[str, Any], *, openrouter: bool = False) -> list[str]:
    """Every rule ``request`` (keyword arguments of ``chat.completions.create``) breaks."""
    out: list[str] = []
    if not isinstance(request.get("model"), str) or not request["model"]:
        out.append("model missing")
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return [*out, "messages must be a non-empty list"]
    open_calls: list[str] = []  # ids of the calls not answered yet
    seen: set[str] = set()
    for i, message in enumerate(messages):
        at = f"messages[{i}]"
        if not isinstance(message, Mapping):
            out.append(f"{at}: must be an object")
            continue
        role = message.get("role")
        if role not in ROLES:
            out.append(f"{at}: role {role!r}")
            continue
        out.extend(_keys(message, at, openrouter))
        content = message.get("content")
        if role != "tool" and open_calls:
            out.append(f"{at}: tool calls {open_calls} unanswered before a {role} message")
            open_calls.clear()
        out.extend(_content_problems(content, role, at, openrouter))
        if role == "assistant":
            out.extend(_assistant_problems(message, content, at, seen, open_calls))
        if role == "tool":
            out.extend(_tool_problems(message, content, at, open_calls))
    if open_calls:
        out.append(f"tool calls {open_calls} never answered")
    return out


def _content_problems(content: Any, role: str, at: str, openrouter: bool) -> list[str]:
    out: list[str] = []
    if isinstance(content, list):
        if not content and role != "assistant":
            out.append(f"{at}: empty content list")
        for j, part in enumerate(content):
            out.extend(_part_problems(part, role, f"{at}.content[{j}]", openrouter))
    elif content is not None and not isinstance(content, str):
        out.append(f"{at}: content must be a string, a list or null")
    if role in ("system", "developer", "user") and not content:
        out.append(f"{at}: empty {role} content")
    return out


def _assistant_problems(message: Mapping[str, Any], content: Any, at: str, seen: set[str],
                        open_calls: list[str]) -> list[str]:
    """An assistant message's refusal and tool calls; each well-formed call's id joins ``seen``
    and ``open_calls``."""
    out: list[str] = []
    calls = message.get("tool_calls")
    refusal = message.get("refusal")
    if refusal is not None and not isinstance(refusal, str):
        out.append(f"{at}: refusal must be a string")
    audio = message.get("audio")  # a previous audio reply, by its id (the audio guide's multi-turn)
    if not content and not calls and not refusal and not (isinstance(audio, Mapping) and audio.get("id")):
        out.append(f"{at}: assistant message with neither content, tool_calls, refusal nor audio")
    for j, call in enumerate(calls or ()):
        kind = call.get("type") if isinstance(call, Mapping) else None
        # A function call's arguments, a custom tool call's free-text input: strings both.
        fn = call.get(kind) if isinstance(call, Mapping) and kind in ("function", "custom") else None
        if (not isinstance(call, Mapping) or kind not in ("function", "custom")
                or not isinstance(call.get("id"), str) or not call["id"]
                or not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str)
                or not isinstance(fn.get("arguments" if kind == "function" else "input"), str)):
            out.append(f"{at}.tool_calls[{j}]: malformed tool call")
            continue
        if call["id"] in seen:
            out.append(f"{at}.tool_calls[{j}]: id {call['id']!r} used twice")
        seen.add(call["id"])
        open_calls.append(call["id"])
    return out


def _tool_problems(message: Mapping[str, Any], content: Any, at: str, open_calls: list[str]) -> list[str]:
    """A tool message answers one of ``open_calls`` (removed from it) and has content."""
    out: list[str] = []
    ident = message.get("tool_call_id")
    if ident not in open_calls:
        out.append(f"{at}: tool result {ident!r} answers no open call")
    else:
        open_calls.remove(ident)
    if content is None:
        out.append(f"{at}: tool content missing")
    return out


def check(request: Mapping[str, Any], *, openrouter: bool = False) -> None:
    found = problems(request, openrouter=openrouter)
    assert not found, "invalid OpenAI Chat request:\n" + "\n".join(found)

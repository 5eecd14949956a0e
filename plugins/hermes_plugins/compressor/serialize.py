"""The middle of the conversation as summariser input (§9.1): redacted turns and their text.

``prepare_turns`` makes plain, redacted copies of the middle messages (content flattened to
text, inline reasoning dropped, media directives replaced) - the ``turns`` of a
``SummaryRequest``. ``serialize_turns`` renders them with role labels for an LLM prompt, each
message capped at 6,000 characters (first 4,000 + last 1,500) and the whole at 160,000.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_core.plugin import ANTHROPIC_CONTENT, match_results, redact, tool_call_fields
from hermes_plugins._common.failures import NO_RESULT, is_no_result
from hermes_plugins._common.injected import injected_kind, pasted_result, request_text
from hermes_plugins._common.reasoning import strip_reasoning
from hermes_plugins.compressor.instructions import LABEL, MID_SYSTEM, mid_system_texts
from hermes_plugins.compressor.prune import IMAGE_PART_TYPES
from hermes_plugins.compressor.server_calls import SERVER_CALLS, ServerCall, server_calls, unanswered

CONTENT_MAX = 6_000
CONTENT_HEAD = 4_000
CONTENT_TAIL = 1_500
ARGUMENTS_MAX = 1_500
ARGUMENTS_HEAD = 1_200
INPUT_MAX = 160_000
INPUT_HEAD_SHARE = 0.45
#: Turns bigger than this are cut (after redaction) before the summariser sees them at all.
TURN_HARD_MAX = 40_000

#: Our metadata that says what a message is (never sent to a provider; see ``payload``).
CARRIED_METADATA = ("_is_error", "_injected", "_summary", "_demonstration")

_MEDIA_DIRECTIVE = re.compile(r"MEDIA:\S+")


def flatten_content(content: Any) -> str:
    """Text of a content value; images become ``[image: <url>]`` (http only) or ``[image]``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        text = content.get("text") or content.get("text_summary")
        return text if isinstance(text, str) else ""
    if not isinstance(content, list):
        return str(content)
    out: list[str] = []
    for part in content:
        if isinstance(part, str):
            out.append(part)
            continue
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == MID_SYSTEM:  # system text, not the turn's: carried apart (``instructions``)
            continue
        if kind in IMAGE_PART_TYPES:
            url = part.get("image_url")
            if isinstance(url, Mapping):
                url = url.get("url")
            if isinstance(url, str) and url.startswith(("http://", "https://")):
                out.append(f"[image: {url}]")
            else:
                out.append("[image]")
            continue
        text = part.get("text")
        if isinstance(text, str):
            out.append(text)
        elif isinstance(part.get("content"), str):
            out.append(part["content"])
        else:
            out.append(f"[{kind or 'part'}]")
    return "\n".join(out)


def clip_middle(text: str, limit: int = CONTENT_MAX, head: int = CONTENT_HEAD, tail: int = CONTENT_TAIL) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:head]}\n...[truncated]...\n{text[-tail:]}"


def plain_text(text: str, *, assistant: bool) -> str:
    """Text with inline reasoning (assistants) and media directives removed, cut to
    ``TURN_HARD_MAX`` - everything ``clean_text`` does except redaction."""
    if assistant and "<" in text:
        text = strip_reasoning(text)
    if "MEDIA:" in text:
        text = _MEDIA_DIRECTIVE.sub("[media attachment]", text)
    if len(text) > TURN_HARD_MAX:
        text = clip_middle(text, TURN_HARD_MAX, TURN_HARD_MAX // 2, TURN_HARD_MAX // 4)
    return text


def message_text(message: Mapping[str, Any]) -> str:
    """``plain_text`` of a message's content (flattened), as a summariser reads it."""
    content = message.get("content")
    return plain_text(content if type(content) is str else flatten_content(content),
                      assistant=message.get("role") == "assistant")


def clean_text(text: str, *, assistant: bool) -> str:
    """Redacted text with inline reasoning (assistants) and media directives removed."""
    if assistant and "<" in text:
        text = strip_reasoning(text)
    if "MEDIA:" in text:
        text = _MEDIA_DIRECTIVE.sub("[media attachment]", text)
    text = redact(text)
    if len(text) > TURN_HARD_MAX:
        text = clip_middle(text, TURN_HARD_MAX, TURN_HARD_MAX // 2, TURN_HARD_MAX // 4)
    return text


def prepare_turns(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Plain redacted copies of ``messages`` for a summariser (never the originals).

    A tool turn carries ``tool_name``, the name of the call it answers by the pairing rule
    (``hermes_core.pairing``): providers reuse call ids, so an id alone does not say which
    call a result belongs to.
    """
    messages = messages if isinstance(messages, Sequence) else list(messages)
    answers = match_results(messages)[0]
    turns: list[dict[str, Any]] = []
    servers = _ServerCalls()
    for index, message in enumerate(messages):
        role = message.get("role") or "user"
        if type(role) is not str:
            role = str(role)
        content = message.get("content")
        turn: dict[str, Any] = {
            "role": role,
            "content": clean_text(content if type(content) is str else flatten_content(content),
                                  assistant=role == "assistant"),
        }
        if role == "tool":
            turn["tool_call_id"] = str(message.get("tool_call_id") or "")
            match = answers.get(index)
            if match is not None:
                turn["tool_name"] = _call_name(messages[match[0]], match[1])
        for key in CARRIED_METADATA:  # the extractive summary reads failures and injections
            if message.get(key):
                turn[key] = message[key]
        if message.get("name"):
            turn["name"] = str(message["name"])
        calls = message.get("tool_calls")
        if calls:
            out_calls = []
            for call in calls:
                if not isinstance(call, Mapping):
                    continue
                _kind, name, arguments = tool_call_fields(call)  # a custom call: its text input
                if not isinstance(arguments, str):
                    arguments = "" if arguments is None else str(arguments)
                out_calls.append({
                    "id": str(call.get("id") or call.get("call_id") or ""),
                    "type": "function",
                    "function": {"name": name or "unknown", "arguments": redact(arguments)},
                })
            turn["tool_calls"] = out_calls
        if role == "assistant":
            servers.read(message, turn)
        instructions = mid_system_texts(content)
        if instructions:
            turn["system_instructions"] = [clean_text(t, assistant=False) for t in instructions]
        turns.append(turn)
    servers.finish()
    return turns


class _ServerCalls:
    """The server-tool and MCP calls of kept Anthropic replies (``server_calls``, as the
    extractive notes read them): ``turn["server_calls"]``, one redacted line per call with its
    outcome (encrypted pages named by URL, never shown), on the turn that holds the result (a
    paused turn's result opens the next reply: the pending calls carry over); a call no
    message answers, on the turn that made it, said so."""

    def __init__(self) -> None:
        self.pending: dict[str, Mapping[str, Any]] = {}
        self.made_in: dict[str, dict[str, Any]] = {}  # call id -> the turn that made it

    def read(self, message: Mapping[str, Any], turn: dict[str, Any]) -> None:
        blocks = message.get(ANTHROPIC_CONTENT)
        if not isinstance(blocks, list):
            return
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") in SERVER_CALLS:
                self.made_in[str(block.get("id") or "")] = turn
        lines = [_server_line(found) for found in server_calls(blocks, self.pending)]
        if lines:
            turn.setdefault("server_calls", []).extend(lines)

    def finish(self) -> None:
        """The calls still pending: ``unanswered`` lists them in the order they were made."""
        for ident, found in zip(list(self.pending), unanswered(self.pending)):
            self.made_in[ident].setdefault("server_calls", []).append(_server_line(found))


def _server_line(found: ServerCall) -> str:
    """``[web_search] query="..." -> 3 results: ...`` redacted, ``ERROR`` when it failed."""
    if found.outcome is None:
        return redact(f"{found.call} -> no result recorded")
    return redact(f"{found.call} -> {'ERROR ' if found.error is not None else ''}{found.outcome}")


def _call_name(message: Mapping[str, Any], position: int) -> str:
    calls = message.get("tool_calls") or ()
    call = calls[position] if position < len(calls) else None
    return tool_call_fields(call)[1] or "unknown"


def serialize_turn(turn: Mapping[str, Any]) -> str:
    """One turn, labelled so an LLM reads it as what it is (issue 29): a result the provider
    flagged is ``ERROR``, a placeholder for a result never recorded says so, a user turn
    that holds no request the person typed (``request_text``) is ``[INJECTED ...]``, and system
    text mid-conversation (``instructions``) follows it as ``[SYSTEM INSTRUCTION ...]``."""
    instructions = turn.get("system_instructions")
    if instructions:
        said = [f"[{LABEL.upper()}]: {clip_middle(t)}" for t in instructions]
        if not (turn.get("content") or "").strip():
            return "\n".join(said)
        return _serialize_turn(turn) + "\n" + "\n".join(said)
    return _serialize_turn(turn)


def _serialize_turn(turn: Mapping[str, Any]) -> str:
    role = turn.get("role")
    body = clip_middle(turn.get("content") or "")
    if role == "tool":
        # The tool it answers, by position: with reused ids the id alone names two calls.
        name = turn.get("tool_name")
        label = f"TOOL RESULT {turn.get('tool_call_id') or '?'}{f' ({name})' if name else ''}"
        if is_no_result(turn):
            return f"[{label}]: ({NO_RESULT}: not a failure, not a success)"
        return f"[{label}{' ERROR' if turn.get('_is_error') else ''}]: {body}"
    if role == "user" and request_text(turn) is None and body.strip():
        kind = injected_kind(turn) or ("tool output" if pasted_result(body) else "harness text")
        return f"[INJECTED {kind.upper()} (not typed by the user)]: {body}"
    if role == "assistant":
        text = f"[ASSISTANT]: {body}"
        calls = turn.get("tool_calls") or ()
        if calls:
            lines = []
            for call in calls:
                fn = call.get("function") or {}
                arguments = fn.get("arguments") or ""
                if len(arguments) > ARGUMENTS_MAX:
                    arguments = arguments[:ARGUMENTS_HEAD] + "..."
                lines.append(f"  {fn.get('name') or 'unknown'}({arguments})")
            text += "\n[Tool calls:\n" + "\n".join(lines) + "\n]"
        servers = turn.get("server_calls") or ()
        if servers:  # run by the provider: no result turn follows them
            text += "\n[Server tool calls (run by the provider):\n" + "\n".join(
                f"  {clip_middle(line, ARGUMENTS_MAX, ARGUMENTS_HEAD, 200)}" for line in servers) + "\n]"
        return text
    return f"[{str(role).upper()}]: {body}"


def bound_text(text: str, limit: int = INPUT_MAX) -> str:
    """Keep the first 45% and last 55% of ``limit`` around a marker naming what was left out."""
    if len(text) <= limit:
        return text
    marker_room = 80
    head = int((limit - marker_room) * INPUT_HEAD_SHARE)
    tail = limit - marker_room - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n\n[... {omitted:,} characters omitted from the middle ...]\n\n{text[-tail:]}"


def serialize_turns(turns: Sequence[Mapping[str, Any]], limit: int = INPUT_MAX) -> str:
    """All turns, role-labelled, separated by blank lines, bounded to ``limit`` characters.

    Builds only as much text as the bound keeps: turns are rendered from both ends inward.
    """
    rendered = [serialize_turn(t) for t in turns] if len(turns) < 2_000 else None
    if rendered is not None:
        return bound_text("\n\n".join(rendered), limit)
    head_room = int(limit * INPUT_HEAD_SHARE)
    tail_room = limit - head_room
    head: list[str] = []
    size = 0
    i = 0
    while i < len(turns) and size < head_room:
        piece = serialize_turn(turns[i])
        head.append(piece)
        size += len(piece) + 2
        i += 1
    tail: list[str] = []
    size = 0
    j = len(turns) - 1
    while j >= i and size < tail_room:
        piece = serialize_turn(turns[j])
        tail.append(piece)
        size += len(piece) + 2
        j -= 1
    middle_count = j - i + 1
    joined = "\n\n".join(head)
    if middle_count > 0:
        joined += f"\n\n[... {middle_count:,} turns omitted from the middle ...]"
    joined += "\n\n" + "\n\n".join(reversed(tail))
    return bound_text(joined, limit)

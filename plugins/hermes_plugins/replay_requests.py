"""The requests a cache replay prices: ``RequestSpec``, ``MessagesPrefix`` for their messages,
and how they are read (a transcript's requests, the report's own input) and replayed as payloads.

Shared by the cache report (``cache_report``), the request-log reader that streams them
(``request_log_stream``) and ``hermes-ctx report``; they sit here, below all three, so the
report and the reader do not import each other.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hermes_core.plugin import (
    InvalidMessagesError,
    PayloadContext,
    ProcessedHistory,
    Transcript,
    assemble_payload,
    bounded,
    canonical_tools,
    escape_surrogates_of,
    parse_transcript,
    read_transcript_text,
    validate_messages,
)


class MessagesPrefix(Sequence[Any]):
    """The first ``end`` messages of a list, without copying them: every request of a replayed
    conversation is a prefix of the same list, and copies would make memory quadratic."""

    __slots__ = ("base", "end")

    def __init__(self, base: list[Any], end: int) -> None:
        self.base = base
        self.end = end

    def __len__(self) -> int:
        return self.end

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return self.base[: self.end][index]
        if index < 0:
            index += self.end
        if not 0 <= index < self.end:
            raise IndexError(index)
        return self.base[index]

    def __iter__(self) -> Iterator[Any]:
        return itertools.islice(self.base, self.end)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"MessagesPrefix({self.end} of {len(self.base)} messages)"


@attrs.frozen(kw_only=True)
class RequestSpec:
    """One request to replay: its system text, tool definitions and messages."""

    system: str
    tools: tuple[Any, ...]
    messages: Sequence[Mapping[str, Any]]


# --- replaying a transcript -----------------------------------------------------------------


def request_ends(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """Where each request of a transcript ends (exclusive indices).

    A request is sent after every user message and after every batch of tool results (the tool
    messages that follow one another); assistant messages are responses, not requests.
    """
    ends: list[int] = []
    last = len(messages) - 1
    for index, message in enumerate(messages):
        role = message.get("role")
        ends_batch = role == "tool" and (index == last or messages[index + 1].get("role") != "tool")
        if role == "user" or ends_batch:
            ends.append(index + 1)
    return ends


def _system_and_rest(messages: list[Any], system: str | None) -> tuple[str, list[Any]]:
    if system is None and messages and messages[0].get("role") == "system":
        content = messages[0].get("content")
        if isinstance(content, str):
            return content, messages[1:]
    return system or "", messages


def entry_tools(value: Any, source: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidMessagesError(f"{source}: 'tools' must be a list of tool definitions")
    return tuple(value)


def entry_messages(value: Any, source: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidMessagesError(f"{source}: 'messages' must be a list of messages")
    validate_messages(value)
    return value


def logged_requests(
    entries: Iterable[Any], source: str, system: str | None, tools: tuple[Any, ...]
) -> Iterator[RequestSpec]:
    """The requests of a request log's entries, one per entry, as sent: ``system`` and ``tools``
    carry over from the entry before when absent; ``append`` instead of ``messages`` is the
    previous request's messages plus these (one list extended, not a copy per request); a
    leading system message is that request's prompt. One rule for the log read whole
    (``parse_report_input``) and streamed (``request_log_stream``)."""
    base: list[Any] = []
    for number, entry in enumerate(entries):
        where = f"{source}: request {number}"
        if not isinstance(entry, dict):
            raise InvalidMessagesError(f"{where}: expected an object")
        if "tools" in entry:
            tools = entry_tools(entry["tools"], where)
        if "append" in entry:
            if "messages" in entry:
                raise InvalidMessagesError(f"{where}: give 'messages' or 'append', not both")
            base.extend(entry_messages(entry["append"], where))
        else:
            base = list(entry_messages(entry.get("messages"), where))  # a rewrite: a new list
        if "system" in entry:
            system = entry["system"] or ""
        else:
            hoisted, rest = _system_and_rest(base, None)
            if rest is not base:  # a leading system message: this request's prompt
                system, base = hoisted, rest
        yield RequestSpec(system=system or "", tools=tools, messages=MessagesPrefix(base, len(base)))


def parse_report_input(text: str, *, source: str = "<input>") -> list[RequestSpec]:
    """The requests a transcript file stands for.

    * a JSON array or JSONL of messages, or ``{"messages": [...], "system": "...", "tools":
      [...]}`` (both optional): one request per turn (``request_ends``); a leading system
      message is the system prompt;
    * ``{"requests": [{"system", "tools", "messages"}, ...]}``: a request log, each entry one
      request as sent (``system`` and ``tools`` carry over from the entry before when absent;
      ``append`` instead of ``messages`` means the previous request's messages plus these) -
      the form that records a compression rewriting the history.
    """
    stripped = text.strip()
    data: Any = None
    if stripped.startswith("{"):
        try:
            data = escape_surrogates_of(stripped, bounded.loads(stripped))
        except bounded.TooDeepError:
            raise InvalidMessagesError(
                f"{source}: JSON nested more than {bounded.MAX_DEPTH} levels deep "
                "(refused rather than risk the stack)"
            ) from None
        except json.JSONDecodeError:
            data = None  # JSONL of messages
    if isinstance(data, dict) and "requests" in data:
        entries = data["requests"]
        if not isinstance(entries, list):
            raise InvalidMessagesError(f"{source}: 'requests' must be a list")
        return list(logged_requests(entries, source, data.get("system"), entry_tools(data.get("tools"), source)))
    if isinstance(data, dict) and "messages" in data and "role" not in data:
        messages = entry_messages(data["messages"], source)
        system_text = data.get("system")
        if system_text is not None and not isinstance(system_text, str):
            raise InvalidMessagesError(f"{source}: 'system' must be a string")
        tools = entry_tools(data.get("tools"), source)
    else:
        messages = parse_transcript(text, source=source)
        system_text, tools = None, ()
    system, rest = _system_and_rest(messages, system_text)
    return [
        RequestSpec(system=system, tools=tools, messages=MessagesPrefix(rest, end))
        for end in request_ends(rest)
    ]


def specs_from_transcript(transcript: Transcript) -> list[RequestSpec]:
    """The requests of a transcript read by ``hermes_core.transcripts`` (any format)."""
    messages = list(transcript.messages)
    tools = tuple(transcript.tools)
    return [
        RequestSpec(system=transcript.system_prompt or "", tools=tools,
                    messages=MessagesPrefix(messages, end))
        for end in request_ends(messages)
    ]


def load_report_input(path: str | Path) -> list[RequestSpec]:
    return parse_report_input(read_transcript_text(path), source=str(Path(path)))


Layout = Callable[[dict[str, Any], PayloadContext], dict[str, Any]]


def replay(specs: Iterable[RequestSpec], layout: Layout, ctx: PayloadContext, *,
           consume: bool = False) -> Iterable[dict[str, Any]]:
    """The laid-out payload of every request, in order (``assemble_payload`` + ``layout``).

    Each message is canonicalised once for the whole replay (``ProcessedHistory``), not once
    per request it is part of. ``consume=True`` (the CLI) lets the replay put the canonical
    form of each message in place of the parsed one in the specs' shared list, so a long
    transcript is not held twice.
    """
    history = ProcessedHistory(verify_window=0)  # a replay never edits a message in place
    for spec in specs:
        system = (spec.system or "").strip()
        messages = spec.messages
        first = messages[0] if len(messages) else None
        if not system and first is not None and first.get("role") == "system":
            payload = assemble_payload(spec.system, messages, spec.tools,
                                       provider=ctx.provider, model=ctx.model)
            yield layout(payload, ctx)
            continue
        if isinstance(messages, MessagesPrefix):
            history.sync_prefix(messages.base, messages.end, consume=consume)
        else:
            history.sync(list(messages))
        canon = history.canon
        payload = {"provider": ctx.provider, "model": ctx.model, "system": system,
                   "messages": canon, "tools": canonical_tools(spec.tools)}
        out = layout(payload, ctx)
        if out.get("messages") is canon:  # the next request extends canon in place
            out = {**out, "messages": list(canon)}
        yield out

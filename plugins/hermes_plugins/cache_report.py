"""The cache economy report: replay a session's requests and price them under a provider's cache.

Each request is reduced to a stream of *units* in the provider's prefix order - every tool
definition, every system block, every message content block - each serialised as compact,
sorted-key JSON without its ``cache_control`` marker (markers move every turn; the cache keys on
content). Two consecutive requests are compared on that stream: the shared prefix (bytes and
tokens) and, when the older request is not a prefix of the newer one, the first differing byte
and its cause.

Cache rules simulated (no TTL expiry: the replay assumes each request follows the previous one
within the TTL):

* ``anthropic`` - entries are written at breakpoints (units carrying ``cache_control``) whose
  prefix holds at least 1,024 tokens; a breakpoint reads the longest entry found at its own
  boundary or the 19 before it (20 boundaries, the lookback); tokens after the read point up to
  the last cacheable breakpoint are written (1.25x for 5 m, 2x for 1 h), reads cost 0.1x.
* ``openai`` - automatic: the longest prefix shared with any earlier request, from 1,024 tokens
  on and in steps of 128, is read at 0.5x; nothing is charged extra for writing.

Token figures are exact cl100k_base counts (``hermes_core.tokens.count_tokens``) of each unit's
text (a text block's text, a tool result's text, otherwise the unit's JSON); the provider's own
tokenizer differs, so read the figures as relative.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import click

from hermes_core import InvalidMessagesError, PayloadContext
from hermes_core.cli import CliState, emit_json, emit_table, fail
from hermes_core.cli.transcripts_cmd import format_option, load_for_cli, resolve_format
from hermes_core.messages import (
    parse_transcript,
    read_transcript_text,
    validate_messages,
)
from hermes_core.payload import anthropic_blocks, assemble_payload
from hermes_core.tokens import IMAGE_TOKEN_ESTIMATE, count_tokens
from hermes_core.transcripts import Transcript
from hermes_plugins.caching import LOOKBACK_BLOCKS

MIN_CACHEABLE_TOKENS = 1_024
OPENAI_CACHE_STEP = 128
WRITE_PRICE = {"5m": 1.25, "1h": 2.0}
READ_PRICE = {"anthropic": 0.1, "openai": 0.5}
PROVIDERS = ("anthropic", "openai")

TOOLS, SYSTEM, MESSAGES = "tools", "system", "messages"
CAUSES = {
    TOOLS: "tool_list_changed",
    SYSTEM: "system_prompt_changed",
    MESSAGES: "history_rewritten",
}

Counter = Callable[[str], int]


@attrs.frozen(kw_only=True)
class Unit:
    """One cacheable block of a request: its canonical bytes, tokens and marker."""

    section: str
    data: bytes
    tokens: int
    ttl: str | None  # the marker's TTL when the unit carries a breakpoint, else None
    message: int | None = None


@attrs.frozen(kw_only=True)
class TurnReport:
    index: int
    messages: int
    input_tokens: int
    prefix_bytes: int
    prefix_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    uncached_tokens: int
    cost: float
    break_: dict[str, Any] | None

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "messages": self.messages,
            "input_tokens": self.input_tokens,
            "prefix_bytes": self.prefix_bytes,
            "prefix_tokens": self.prefix_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "uncached_tokens": self.uncached_tokens,
            "cost_ratio": round(self.cost / self.input_tokens, 4) if self.input_tokens else 1.0,
            "break": self.break_,
        }


# --- units ----------------------------------------------------------------------------------


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def _without_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_markers(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_markers(v) for v in value]
    return value


def _marker_ttl(block: Any) -> str | None:
    if isinstance(block, Mapping):
        marker = block.get("cache_control")
        if isinstance(marker, Mapping):
            return "1h" if marker.get("ttl") == "1h" else "5m"
    return None


def _normalise_block(block: Any) -> Any:
    """A block as the cache sees it: no marker, a tool result's text always as text blocks."""
    clean = _without_markers(block)
    if isinstance(clean, dict) and clean.get("type") == "tool_result":
        content = clean.get("content")
        if isinstance(content, str):
            clean["content"] = [{"type": "text", "text": content}] if content else []
    return clean


def _token_text(block: Any) -> str | None:
    """The text to count for a block; ``None`` for an image (a fixed estimate)."""
    if isinstance(block, dict):
        kind = block.get("type")
        if kind in ("image", "image_url", "input_image"):
            return None
        if kind == "text" and isinstance(block.get("text"), str):
            return str(block["text"])
        if kind == "tool_result":
            content = block.get("content")
            parts = content if isinstance(content, list) else [content]
            texts = [
                p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else _dumps(p)
                for p in parts
                if p not in (None, "")
            ]
            return "\n".join(texts)
    return _dumps(block)


class _UnitMaker:
    """Builds units, caching bytes per unmarked message object and tokens per unit."""

    def __init__(self, count: Counter) -> None:
        self.count = count
        self._tokens: dict[bytes, int] = {}
        self._by_message: dict[int, tuple[Any, list[tuple[bytes, int]]]] = {}

    def _unit(self, section: str, block: Any, prefix: str = "", message: int | None = None,
              ttl: str | None = None) -> Unit:
        clean = _normalise_block(block)
        data = (prefix + _dumps(clean)).encode("utf-8")
        tokens = self._tokens.get(data)
        if tokens is None:
            text = _token_text(clean)
            tokens = IMAGE_TOKEN_ESTIMATE if text is None else self.count(text)
            self._tokens[data] = tokens
        return Unit(section=section, data=data, tokens=tokens, ttl=ttl, message=message)

    def units(self, payload: Mapping[str, Any]) -> list[Unit]:
        out: list[Unit] = []
        for tool in payload.get("tools") or ():
            out.append(self._unit(TOOLS, tool, ttl=_marker_ttl(tool)))
        system = payload.get("system")
        if isinstance(system, str):
            if system:
                out.append(self._unit(SYSTEM, {"type": "text", "text": system}))
        elif isinstance(system, list):
            for block in system:
                out.append(self._unit(SYSTEM, block, ttl=_marker_ttl(block)))
        for index, message in enumerate(payload.get("messages") or ()):
            out.extend(self._message_units(index, message))
        return out

    def _message_units(self, index: int, message: Mapping[str, Any]) -> list[Unit]:
        role = "assistant" if message.get("role") == "assistant" else "user"
        cached = self._by_message.get(id(message))
        if cached is not None and cached[0] is message:
            return [
                Unit(section=MESSAGES, data=d, tokens=t, ttl=None, message=index)
                for d, t in cached[1]
            ]
        units = [
            self._unit(MESSAGES, block, prefix=role + ":", message=index, ttl=_marker_ttl(block))
            for block in anthropic_blocks(message)
        ]
        if all(u.ttl is None for u in units):
            # Unmarked messages are the same objects from request to request (copy-on-write
            # payloads); keep a reference so the id stays theirs.
            self._by_message[id(message)] = (message, [(u.data, u.tokens) for u in units])
        return units


# --- simulation -----------------------------------------------------------------------------


def _chain(units: Sequence[Unit]) -> list[bytes]:
    hashes: list[bytes] = []
    previous = b""
    for unit in units:
        previous = hashlib.blake2b(previous + unit.data, digest_size=16).digest()
        hashes.append(previous)
    return hashes


def _first_difference(old: Sequence[Unit], new: Sequence[Unit]) -> tuple[int, int, int] | None:
    """(unit index, byte offset, shared tokens) where ``new`` stops extending ``old``."""
    offset = tokens = 0
    for index, unit in enumerate(old):
        if index >= len(new):
            return index, offset, tokens
        other = new[index]
        if other.data != unit.data:
            common = 0
            limit = min(len(unit.data), len(other.data))
            while common < limit and unit.data[common] == other.data[common]:
                common += 1
            return index, offset + common, tokens
        offset += len(unit.data)
        tokens += unit.tokens
    return None


class CacheSimulator:
    """Prices a sequence of requests under one provider's prefix-cache rules."""

    def __init__(self, provider: str = "anthropic", *, count: Counter | None = None,
                 min_tokens: int = MIN_CACHEABLE_TOKENS, lookback: int = LOOKBACK_BLOCKS) -> None:
        if provider not in PROVIDERS:
            raise ValueError(f"no cache rules for provider {provider!r}; known: {', '.join(PROVIDERS)}")
        self.provider = provider
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._maker = _UnitMaker(count or count_tokens)
        self._entries: dict[bytes, int] = {}
        self._previous: list[Unit] | None = None
        self.turns: list[TurnReport] = []

    def add(self, payload: Mapping[str, Any]) -> TurnReport:
        units = self._maker.units(payload)
        hashes = _chain(units)
        cumulative: list[int] = []
        total = 0
        for unit in units:
            total += unit.tokens
            cumulative.append(total)
        if self.provider == "anthropic":
            read, writes = self._anthropic(units, hashes, cumulative)
        else:
            read, writes = self._openai(hashes, cumulative)
        written = sum(tokens for tokens, _ in writes)
        cost = (total - read - written) + read * READ_PRICE[self.provider]
        cost += sum(tokens * WRITE_PRICE[ttl] for tokens, ttl in writes)
        prefix_bytes = prefix_tokens = 0
        brk: dict[str, Any] | None = None
        if self._previous is not None:
            diff = _first_difference(self._previous, units)
            if diff is None:
                prefix_bytes = sum(len(u.data) for u in self._previous)
                prefix_tokens = sum(u.tokens for u in self._previous)
            else:
                unit_index, prefix_bytes, prefix_tokens = diff
                brk = self._cause(self._previous, units, unit_index, prefix_bytes)
        report = TurnReport(
            index=len(self.turns),
            messages=len(payload.get("messages") or ()),
            input_tokens=total,
            prefix_bytes=prefix_bytes,
            prefix_tokens=prefix_tokens,
            cache_read_tokens=read,
            cache_write_tokens=written,
            uncached_tokens=total - read - written,
            cost=cost,
            break_=brk,
        )
        self._previous = units
        self.turns.append(report)
        return report

    @staticmethod
    def _cause(old: Sequence[Unit], new: Sequence[Unit], index: int, byte: int) -> dict[str, Any]:
        sections = {u.section for u in (old[index] if index < len(old) else None,
                                        new[index] if index < len(new) else None) if u is not None}
        section = next(s for s in (TOOLS, SYSTEM, MESSAGES) if s in sections)
        brk: dict[str, Any] = {"byte": byte, "cause": CAUSES[section]}
        if section == MESSAGES:
            unit = new[index] if index < len(new) else old[index]
            brk["message"] = unit.message
        return brk

    def _anthropic(self, units: Sequence[Unit], hashes: Sequence[bytes],
                   cumulative: Sequence[int]) -> tuple[int, list[tuple[int, str]]]:
        breakpoints = [i for i, unit in enumerate(units) if unit.ttl is not None]
        read = 0
        for point in breakpoints:
            for j in range(point, max(-1, point - self.lookback), -1):
                if hashes[j] in self._entries:
                    read = max(read, cumulative[j])
                    break
        writes: list[tuple[int, str]] = []
        start = read
        for point in breakpoints:
            size = cumulative[point]
            if size < self.min_tokens:
                continue
            if size > start:
                writes.append((size - start, units[point].ttl or "5m"))
                start = size
            self._entries[hashes[point]] = size
        return read, writes

    def _openai(self, hashes: Sequence[bytes],
                cumulative: Sequence[int]) -> tuple[int, list[tuple[int, str]]]:
        shared = 0
        for j in range(len(hashes) - 1, -1, -1):
            if hashes[j] in self._entries:
                shared = cumulative[j]
                break
        read = 0
        if shared >= self.min_tokens:
            read = self.min_tokens + (shared - self.min_tokens) // OPENAI_CACHE_STEP * OPENAI_CACHE_STEP
        for h, size in zip(hashes, cumulative):
            self._entries[h] = size
        return read, []

    def summary(self) -> dict[str, Any]:
        total = sum(t.input_tokens for t in self.turns)
        cost = sum(t.cost for t in self.turns)
        return {
            "requests": len(self.turns),
            "input_tokens": total,
            "cache_read_tokens": sum(t.cache_read_tokens for t in self.turns),
            "cache_write_tokens": sum(t.cache_write_tokens for t in self.turns),
            "uncached_tokens": sum(t.uncached_tokens for t in self.turns),
            "cost_ratio": round(cost / total, 4) if total else 1.0,
            "breaks": sum(1 for t in self.turns if t.break_ is not None),
        }

    def report(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "counter": "cl100k_base",
            "turns": [t.as_json() for t in self.turns],
            "total": self.summary(),
        }


def cache_report(payloads: Iterable[Mapping[str, Any]], *, provider: str = "anthropic",
                 count: Counter | None = None) -> dict[str, Any]:
    """The report (JSON shape of ``hermes-ctx cache-report --json``) for laid-out payloads."""
    simulator = CacheSimulator(provider, count=count)
    for payload in payloads:
        simulator.add(payload)
    return simulator.report()


# --- replaying a transcript -----------------------------------------------------------------


@attrs.frozen(kw_only=True)
class RequestSpec:
    """One request to replay: its system text, tool definitions and messages."""

    system: str
    tools: tuple[Any, ...]
    messages: tuple[Mapping[str, Any], ...]


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


def _tools(value: Any, source: str) -> tuple[Any, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidMessagesError(f"{source}: 'tools' must be a list of tool definitions")
    return tuple(value)


def _messages(value: Any, source: str) -> list[Any]:
    if not isinstance(value, list):
        raise InvalidMessagesError(f"{source}: 'messages' must be a list of messages")
    validate_messages(value)
    return value


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
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None  # JSONL of messages
    if isinstance(data, dict) and "requests" in data:
        entries = data["requests"]
        if not isinstance(entries, list):
            raise InvalidMessagesError(f"{source}: 'requests' must be a list")
        specs: list[RequestSpec] = []
        system: str | None = data.get("system")
        tools = _tools(data.get("tools"), source)
        for number, entry in enumerate(entries):
            where = f"{source}: request {number}"
            if not isinstance(entry, dict):
                raise InvalidMessagesError(f"{where}: expected an object")
            if "tools" in entry:
                tools = _tools(entry["tools"], where)
            if "append" in entry:
                if "messages" in entry:
                    raise InvalidMessagesError(f"{where}: give 'messages' or 'append', not both")
                previous: list[Any] = list(specs[-1].messages) if specs else []
                messages = previous + _messages(entry["append"], where)
            else:
                messages = _messages(entry.get("messages"), where)
            if "system" in entry:
                system, rest = _system_and_rest(messages, entry["system"] or "")
            else:
                hoisted, rest = _system_and_rest(messages, None)
                if rest is not messages:  # a leading system message: this request's prompt
                    system = hoisted
            specs.append(RequestSpec(system=system or "", tools=tools, messages=tuple(rest)))
        return specs
    if isinstance(data, dict) and "messages" in data and "role" not in data:
        messages = _messages(data["messages"], source)
        system_text = data.get("system")
        if system_text is not None and not isinstance(system_text, str):
            raise InvalidMessagesError(f"{source}: 'system' must be a string")
        tools = _tools(data.get("tools"), source)
    else:
        messages = parse_transcript(text, source=source)
        system_text, tools = None, ()
    system, rest = _system_and_rest(messages, system_text)
    return [
        RequestSpec(system=system, tools=tools, messages=tuple(rest[:end]))
        for end in request_ends(rest)
    ]


def specs_from_transcript(transcript: Transcript) -> list[RequestSpec]:
    """The requests of a transcript read by ``hermes_core.transcripts`` (any format)."""
    messages = list(transcript.messages)
    tools = tuple(transcript.tools)
    return [
        RequestSpec(system=transcript.system_prompt or "", tools=tools, messages=tuple(messages[:end]))
        for end in request_ends(messages)
    ]


def load_report_input(path: str | Path) -> list[RequestSpec]:
    return parse_report_input(read_transcript_text(path), source=str(Path(path)))


Layout = Callable[[dict[str, Any], PayloadContext], dict[str, Any]]


def replay(specs: Iterable[RequestSpec], layout: Layout, ctx: PayloadContext) -> Iterable[dict[str, Any]]:
    """The laid-out payload of every request, in order."""
    for spec in specs:
        payload = assemble_payload(spec.system, spec.messages, spec.tools,
                                   provider=ctx.provider, model=ctx.model)
        yield layout(payload, ctx)


# --- CLI ------------------------------------------------------------------------------------


def _break_text(brk: Mapping[str, Any] | None) -> str:
    if brk is None:
        return "-"
    where = f" (message {brk['message']})" if brk.get("message") is not None else ""
    return f"{brk['cause']} @ byte {brk['byte']}{where}"


@click.command("cache-report")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--provider", type=click.Choice(PROVIDERS), default="anthropic", show_default=True,
              help="Whose cache rules and layout to replay under.")
@click.option("--model", default="", help="Model name passed to the layout hook.")
@click.option("--ttl", type=click.Choice(["5m", "1h"]), default=None,
              help="Cache TTL (default: prompt_caching.cache_ttl).")
@click.option("--json", "as_json", is_flag=True,
              help="JSON: {turns: [{index, prefix_tokens, cache_write_tokens, cache_read_tokens, "
                   "uncached_tokens, break}], total: {input_tokens, cost_ratio}}.")
@format_option
@click.pass_obj
def cache_report_command(state: CliState, file: str, provider: str, model: str,
                         ttl: str | None, as_json: bool, transcript_format: str = "auto",
                         transcript_index: int | None = None) -> None:
    """Replay a transcript request by request and price it under a provider's prompt cache.

    Takes the report's own shapes (OpenAI chat, ``{"requests": [...]}``) or a transcript in any
    format ``hermes-ctx formats`` lists (``--format``; detected by content)."""
    try:
        fmt = resolve_format(state, Path(file), transcript_format)
        if fmt in (None, "openai"):
            specs = load_report_input(file)
        else:
            specs = specs_from_transcript(load_for_cli(state, Path(file), fmt, transcript_index))
    except InvalidMessagesError as exc:
        fail(str(exc))
    if not specs:
        fail(f"{file}: no request to replay (no user message or tool result)")
    config = state.config
    ctx = PayloadContext(
        provider=provider, model=model, session_id="cache-report", config=config,
        cache_ttl=ttl or config.prompt_caching.cache_ttl,
    )
    simulator = CacheSimulator(provider)
    for payload in replay(specs, state.host.payload_cache_layout, ctx):
        simulator.add(payload)
    report = simulator.report()
    report["ttl"] = ctx.cache_ttl
    if as_json:
        emit_json(report)
        return
    emit_table(
        ["TURN", "MSGS", "INPUT", "PREFIX_BYTES", "PREFIX_TOK", "READ", "WRITE", "UNCACHED",
         "COST", "BREAK"],
        [
            [t["index"], t["messages"], t["input_tokens"], t["prefix_bytes"], t["prefix_tokens"],
             t["cache_read_tokens"], t["cache_write_tokens"], t["uncached_tokens"],
             f"{t['cost_ratio']:.2f}", _break_text(t["break"])]
            for t in report["turns"]
        ],
    )
    total = report["total"]
    click.echo(
        f"\n{total['requests']} requests, {total['input_tokens']:,} input tokens "
        f"({report['counter']}); provider {provider}, ttl {ctx.cache_ttl}: "
        f"read {total['cache_read_tokens']:,}, written {total['cache_write_tokens']:,}, "
        f"uncached {total['uncached_tokens']:,}; cost with caching / without = "
        f"{total['cost_ratio']:.3f} (saving {(1 - total['cost_ratio']) * 100:.1f}%), "
        f"{total['breaks']} prefix break(s)"
    )

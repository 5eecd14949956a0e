"""Built-in plugin ``caching``: prompt-cache layouts for Anthropic and OpenAI-style providers.

* ``anthropic``: the ``system_and_3`` layout - four ``cache_control`` breakpoints, on the system
  prompt and on the last three non-system messages (``anthropic_layout``).
* OpenAI-style (``openai``, ``azure``, ``openrouter``): no markers (their caching is automatic),
  but a ``prompt_cache_key`` that is stable for the session, so requests of one conversation are
  routed to the same cache. An OpenRouter request to a Claude model also gets the breakpoints, in
  the envelope form OpenRouter forwards to Anthropic.
* any other provider: ``None``, so a plugin for Gemini, Bedrock ... answers for its own provider.

The layout is a pure function: the input payload is never mutated, only the messages it marks
are (deep) copied, every other message is the same object - a deep copy of the whole history
would cost about eleven times a full token-estimate pass on every request.
"""

from __future__ import annotations

import copy
import functools
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import click

from hermes_core.plugin import ANTHROPIC_CONTENT, ConfigSection, PayloadContext, hookimpl, takes_marker
from hermes_plugins.cache_rules import LOOKBACK_BLOCKS, PROMPT_CACHING, cache_ttl

MAX_BREAKPOINTS = 4
TTL_5M = "5m"
TTL_1H = "1h"
_TTL_RANK = {TTL_5M: 0, TTL_1H: 1}
#: Providers that take a ``prompt_cache_key`` (OpenAI's parameter; OpenRouter forwards it).
PROMPT_CACHE_KEY_PROVIDERS = frozenset({"openai", "azure", "openrouter"})


def normalise_ttl(ttl: str | None) -> str:
    """``"1h"`` stays ``"1h"``; anything else is the 5-minute default."""
    return TTL_1H if ttl == TTL_1H else TTL_5M


def cache_marker(ttl: str | None = TTL_5M) -> dict[str, str]:
    """``{"type": "ephemeral"}``, plus ``"ttl": "1h"`` only for the one-hour TTL."""
    marker = {"type": "ephemeral"}
    if normalise_ttl(ttl) == TTL_1H:
        marker["ttl"] = TTL_1H
    return marker


def block_count(message: Mapping[str, Any]) -> int:
    """How many Anthropic content blocks a message becomes (what the lookback counts)."""
    if message.get("role") == "tool":
        return 1
    content = message.get("content")
    if isinstance(content, str):
        count = 1 if content else 0
    elif isinstance(content, list):
        count = len(content)
    else:
        count = 1 if isinstance(content, dict) else 0
    calls = message.get("tool_calls")
    return count + (len(calls) if isinstance(calls, list) else 0)


def marker_part(message: Mapping[str, Any]) -> int | None:
    """The index of the part of a native Anthropic message's list content that gets the marker:
    the last one that takes one (``takes_marker``: not thinking, not a ``fallback``, not a type
    nobody documented - the API may refuse a marker there; a Chat part such as ``image_url`` is
    converted by the wire, which does not carry a marker over). A reply that kept its original
    blocks: its last part, where the wire reads the marker before moving it onto the last kept
    block that takes one. ``None``: no part can carry it."""
    content = message.get("content")
    if not isinstance(content, list) or not content:
        return None
    if ANTHROPIC_CONTENT in message:
        return len(content) - 1 if isinstance(content[-1], dict) else None
    for index in range(len(content) - 1, -1, -1):
        if isinstance(content[index], dict) and takes_marker(content[index]):
            return index
    return None


def can_carry_marker(message: Mapping[str, Any], native: bool) -> bool:
    """Whether a marker placed on ``message`` reaches the provider.

    Native Anthropic: yes, unless its content is a list none of whose parts takes a marker
    (``marker_part``); an empty content or a tool result takes a top-level marker that the wire
    conversion moves onto its block. Envelope (OpenAI format forwarded to Anthropic): only a
    non-empty string content or a list content ending in a dict.
    """
    if native:
        content = message.get("content")
        return (message.get("role") == "tool" or not isinstance(content, list) or not content
                or marker_part(message) is not None)
    content = message.get("content")
    if isinstance(content, str):
        return bool(content)
    if isinstance(content, list):
        return bool(content) and isinstance(content[-1], dict)
    return False


def _strip_markers(message: dict[str, Any]) -> None:
    """Remove markers from a message we own (a fresh deep copy)."""
    message.pop("cache_control", None)
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict):
                block.pop("cache_control", None)


def apply_cache_marker(
    message: Mapping[str, Any], marker: Mapping[str, str], native: bool
) -> dict[str, Any]:
    """A deep copy of ``message`` carrying ``marker`` where the provider expects it.

    Tool results: native -> top-level marker; envelope -> a marked text part (a top-level marker
    on a tool message hangs OpenRouter). Empty or ``None`` content: native -> top-level marker,
    envelope -> none. A string becomes one marked text block; a list gets the marker on its last
    part that takes one (native: ``marker_part``) or on its last element when that is a dict
    (envelope); an empty list is left alone.
    """
    # Metadata (``_``-keys: a reply's original Anthropic blocks) is never marked: shared, not
    # copied - a copy would cost as much as the blocks are large, for nothing.
    out: dict[str, Any] = {k: v if k[:1] == "_" else copy.deepcopy(v) for k, v in message.items()}
    _strip_markers(out)
    mark = dict(marker)
    content = out.get("content")
    if out.get("role") == "tool" and native:
        out["cache_control"] = mark
    elif content is None or content == "":
        if native:
            out["cache_control"] = mark
    elif isinstance(content, str):
        out["content"] = [{"type": "text", "text": content, "cache_control": mark}]
    elif native and isinstance(content, list):
        index = marker_part(out)
        if index is not None:
            content[index]["cache_control"] = mark
    elif isinstance(content, list) and content and isinstance(content[-1], dict):
        content[-1]["cache_control"] = mark
    return out


def mark_system(system: Any, marker: Mapping[str, str]) -> tuple[Any, bool]:
    """The system prompt with a marker, and whether one was placed.

    A string becomes one marked text block. A list of two or more blocks gets the marker on its
    first block only (the stable half of a stable/dynamic split); a single block gets it too.
    """
    if isinstance(system, str):
        if not system:
            return system, False
        return [{"type": "text", "text": system, "cache_control": dict(marker)}], True
    if isinstance(system, list) and system:
        blocks = copy.deepcopy(system)
        for block in blocks:
            if isinstance(block, dict):
                block.pop("cache_control", None)
        target = blocks[0] if len(blocks) >= 2 else blocks[-1]
        if isinstance(target, dict):
            target["cache_control"] = dict(marker)
            return blocks, True
        return blocks, False
    return system, False


def split_system(system: Any, prefix: str, marker: Mapping[str, str]) -> list[dict[str, Any]] | None:
    """A string system prompt that starts with ``prefix`` as two marked text blocks (prefix,
    rest), so the prefix keeps its own cache entry when only the rest changes; ``None`` when it
    does not apply (not a string, no prefix, or nothing but whitespace after it - an empty or
    blank text block is never sent). The whitespace between the two layers ends the first
    block, so the blocks concatenate back to exactly the system prompt."""
    if not prefix.strip():
        return None
    if isinstance(system, list):  # split before (the layout is idempotent): mark both again
        texts = [b.get("text") if isinstance(b, dict) and b.get("type") == "text" else None for b in system]
        if len(texts) != 2 or not all(isinstance(t, str) and t.strip() for t in texts):
            return None
        system = f"{texts[0]}{texts[1]}"
    if not isinstance(system, str) or not system.startswith(prefix):
        return None
    rest = system[len(prefix):].lstrip()
    if not rest:
        return None
    cut = len(system) - len(rest)
    return [
        {"type": "text", "text": system[:cut], "cache_control": dict(marker)},
        {"type": "text", "text": rest, "cache_control": dict(marker)},
    ]


def previous_request_end(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the last message of the previous request, or -1.

    A request is sent after a user message or after a batch of tool results; the message before
    the last assistant message (walking back over the trailing user/tool messages) is where the
    previous request ended and put its last breakpoint.
    """
    index = len(messages) - 1
    while index >= 0 and messages[index].get("role") in ("tool", "user"):
        index -= 1
    if index < 0 or messages[index].get("role") != "assistant":
        return -1
    index -= 1
    while index >= 0 and messages[index].get("role") == "system":
        index -= 1
    return index


def has_own_marker(message: Mapping[str, Any]) -> bool:
    """Whether a history message carries the host's own marker on a content block."""
    if "_cache_control" in message:  # a tool result's own marker (hermes_core.conversion)
        return True
    kept = message.get("_anthropic_content")  # a reply's original blocks
    if isinstance(kept, list) and any(isinstance(b, dict) and "cache_control" in b for b in kept):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and "cache_control" in b for b in content)


def choose_breakpoints(
    messages: Sequence[Mapping[str, Any]], slots: int, native: bool = True,
    skip_marked: bool = False,
) -> list[int]:
    """Indices of the messages to mark, ascending: the last ``slots`` non-system carriers.

    ``skip_marked``: the history carries the host's own markers; a message with one is never
    chosen (its marker stays as the host put it and already caches that prefix).

    Lookback guard: when the turn since the previous request added more blocks than the
    lookback reaches (an assistant with a dozen parallel tool calls and their results), the
    earliest of those marks moves to the previous request's last message, whose prefix is
    already cached - without it every breakpoint misses and the whole history is written again.
    """
    if slots <= 0:
        return []
    chosen: list[int] = []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "system" or not can_carry_marker(message, native):
            continue
        if skip_marked and has_own_marker(message):
            continue
        chosen.append(index)
        if len(chosen) == slots:
            break
    chosen.reverse()
    if len(chosen) < 2:
        return chosen
    boundary = previous_request_end(messages)
    if boundary < 0 or boundary >= chosen[0] or boundary in chosen:
        return chosen
    if not can_carry_marker(messages[boundary], native) or (
            skip_marked and has_own_marker(messages[boundary])):
        return chosen
    distance = 0
    for index in range(boundary + 1, chosen[0] + 1):
        distance += block_count(messages[index])
    if distance < LOOKBACK_BLOCKS:
        return chosen
    return [boundary, *chosen[1:]]


def anthropic_layout(
    payload: Mapping[str, Any],
    *,
    ttl: str | None = TTL_5M,
    system_ttl: str | None = None,
    native: bool = True,
    static_prefix: str = "",
    in_place: bool = False,
    user_breakpoints: int = 0,
) -> dict[str, Any]:
    """``system_and_3``: a new payload with at most four ``cache_control`` breakpoints.

    ``user_breakpoints``: markers the history carries itself (the host's, kept on the wire);
    the layout gives way and places at most ``4 - user_breakpoints`` of its own, the system's
    first.

    ``in_place``: mark ``payload["messages"]`` itself (set the marked items) instead of a copy
    of it, when the caller made that list for this call (``PayloadContext.messages_writable``).

    With a ``static_prefix`` the system string starts with (and more after it), the system
    goes out as two marked blocks (``split_system``) and two breakpoints are left for messages.

    ``ttl`` applies to the message breakpoints, ``system_ttl`` (default: ``ttl``) to the system
    prompt's. Anthropic requires longer-lived entries before shorter ones, and the system prompt
    comes first: a message breakpoint never gets a longer TTL than the system's (``system_ttl``
    ``5m`` with ``ttl`` ``1h`` gives ``5m`` everywhere); ``1h`` system + ``5m`` messages is the
    useful mix. Assumes a canonical payload (``hermes_core.payload.assemble_payload`` removes
    stray markers): markers on messages it does not mark are not looked for.
    """
    message_ttl = normalise_ttl(ttl)
    head_ttl = normalise_ttl(system_ttl) if system_ttl is not None else message_ttl
    if _TTL_RANK[message_ttl] > _TTL_RANK[head_ttl]:
        message_ttl = head_ttl
    out = dict(payload)
    slots = MAX_BREAKPOINTS - max(0, user_breakpoints)
    if "system" in payload and slots > 0:  # none left: the system goes unmarked
        split = split_system(payload["system"], static_prefix, cache_marker(head_ttl)) if slots >= 3 else None
        if split is not None:
            out["system"] = split
            slots -= 2
        else:
            system, placed = mark_system(payload["system"], cache_marker(head_ttl))
            out["system"] = system
            slots -= int(placed)
    messages = payload.get("messages") or []
    marked = messages if in_place and type(messages) is list else list(messages)
    marker = cache_marker(message_ttl)
    for index in choose_breakpoints(messages, slots, native, skip_marked=user_breakpoints > 0):
        marked[index] = apply_cache_marker(messages[index], marker, native)
    out["messages"] = marked
    return out


def is_claude(model: str) -> bool:
    return "claude" in (model or "").lower()


@functools.lru_cache(maxsize=256)
def prompt_cache_key(session_id: str) -> str | None:
    """A stable, bounded key for one session (a digest, so the id itself is not sent)."""
    if not session_id:
        return None
    return "hermes-" + hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]


def _key_enabled(ctx: PayloadContext) -> bool:
    config = ctx.config
    if config is None:
        return True
    return bool(config.section(PROMPT_CACHING).prompt_cache_key)


@hookimpl
def hermes_config_sections() -> ConfigSection[Any]:
    return PROMPT_CACHING


@hookimpl(trylast=True)
def hermes_payload_cache_layout(
    payload: dict[str, Any], ctx: PayloadContext
) -> dict[str, Any] | None:
    provider = (ctx.provider or "").strip().lower()
    ttl = cache_ttl(ctx.cache_ttl, ctx.config)
    if provider == "anthropic":
        return anthropic_layout(
            payload, ttl=ttl, native=True, static_prefix=ctx.static_system_prefix,
            in_place=ctx.messages_writable, user_breakpoints=ctx.user_breakpoints,
        )
    if provider not in PROMPT_CACHE_KEY_PROVIDERS:
        return None
    out: dict[str, Any] = dict(payload)
    if provider == "openrouter" and is_claude(ctx.model):
        out = anthropic_layout(payload, ttl=ttl, native=False, in_place=ctx.messages_writable,
                               user_breakpoints=ctx.user_breakpoints)
    if _key_enabled(ctx):
        key = prompt_cache_key(ctx.session_id)
        if key:
            out["prompt_cache_key"] = key
    return out


@hookimpl(trylast=True)
def hermes_cli_register_commands(cli: click.Group) -> None:
    from hermes_plugins.cache_report_cli import cache_report_command

    cli.add_command(cache_report_command)

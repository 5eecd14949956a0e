"""Phase 4, assembly (§10): head + framed summary + tail, then pair repair and media stripping.

The summary's role is chosen so roles keep alternating and at least one user message exists
(strict providers reject a transcript without one); when no role fits, the summary is merged
into the first tail message instead of standing alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import ANTHROPIC_CONTENT, repair_pairing
from hermes_core.plugin import TOOL_CALL_REMOVED as TOOL_CALL_REMOVED  # re-exported
from hermes_plugins.compressor.framing import (
    END_MARKER,
    FALLBACK_KEY,
    HAS_USER_TURN_KEY,
    MERGED_DELIMITER,
    MERGED_HEADER,
    MERGED_KEY,
    OWNER,
    OWNER_KEY,
    SUMMARY_KEY,
    SYSTEM_NOTE,
    compose_prepended,
    compose_standalone,
    compose_wrapped,
    frame_summary,
    is_summary_message,
    unwrap,
)
from hermes_plugins.compressor.plan import PrunePlan
from hermes_plugins.compressor.prune import IMAGE_PART_TYPES

MEDIA_PLACEHOLDER = "[earlier image attachment removed after compaction]"


def strip_stale_summaries(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop standalone summaries and unwrap merged ones (their own content stays)."""
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") != "tool" and is_summary_message(message):
            kept = unwrap(message)
            if kept is not None:
                out.append(kept)
            continue
        out.append(message)
    return out


def with_system_note(message: dict[str, Any]) -> dict[str, Any]:
    """The system message with the compaction note appended once."""
    content = message.get("content")
    if isinstance(content, str):
        if SYSTEM_NOTE in content:
            return message
        return {**message, "content": f"{content}\n\n{SYSTEM_NOTE}" if content else SYSTEM_NOTE}
    if isinstance(content, list):
        if any(isinstance(p, dict) and p.get("text") == SYSTEM_NOTE for p in content):
            return message
        return {**message, "content": [*content, {"type": "text", "text": SYSTEM_NOTE}]}
    if content is None:
        return {**message, "content": SYSTEM_NOTE}
    return message


def choose_role(
    head: Sequence[dict[str, Any]], tail: Sequence[dict[str, Any]], compress_start: int
) -> tuple[str, bool, bool]:
    """``(role, merge_into_first_tail, force_user)`` for the summary (§10.2 step 3)."""
    last_head_role = head[-1].get("role") if head else "user"
    first_tail_role = tail[0].get("role") if tail else None
    has_user = any(m.get("role") == "user" for m in head) or any(m.get("role") == "user" for m in tail)
    force_user = compress_start == 0 or last_head_role == "system" or not has_user
    role = "user" if last_head_role in ("assistant", "tool") or force_user else "assistant"
    merge = False
    if role == first_tail_role:
        flipped = "assistant" if role == "user" else "user"
        if flipped != last_head_role and not force_user:
            role = flipped
        elif tail:
            merge = True
    return role, merge, force_user


def keeps_provider_blocks(message: Mapping[str, Any]) -> bool:
    """Whether ``message`` is an Anthropic reply kept with blocks a rewrite would lose: its
    signed thinking, a server tool's call or result (whose other half may be in the next
    reply of a continued turn), cited text."""
    blocks = message.get(ANTHROPIC_CONTENT)
    return isinstance(blocks, list) and any(
        isinstance(b, Mapping) and (b.get("type") not in ("text", "tool_use") or b.get("citations"))
        for b in blocks)


def _merge_into(message: dict[str, Any], block: str, prepend: bool) -> dict[str, Any]:
    content = message.get("content")
    out = {k: v for k, v in message.items() if k != "api_content"}
    if isinstance(content, list):
        if prepend:
            out["content"] = [{"type": "text", "text": f"{block}\n\n{END_MARKER}"}, *content]
        else:
            out["content"] = [
                {"type": "text", "text": MERGED_HEADER},
                *content,
                {"type": "text", "text": f"{MERGED_DELIMITER}\n{block}\n\n{END_MARKER}"},
            ]
    else:
        text = content if isinstance(content, str) else ""
        out["content"] = compose_prepended(block, text) if prepend else compose_wrapped(text, block)
    out[MERGED_KEY] = "prepended" if prepend else "wrapped"
    return out


def assemble(
    head: Sequence[dict[str, Any]],
    body: str,
    tail: Sequence[dict[str, Any]],
    *,
    compress_start: int,
    fallback: bool = False,
) -> list[dict[str, Any]]:
    """Head, the framed summary (standalone or merged into the first tail message), tail."""
    head = strip_stale_summaries(head)
    tail = strip_stale_summaries(tail)
    if head and head[0].get("role") == "system":
        head = [with_system_note(head[0]), *head[1:]]
    role, merge, force_user = choose_role(head, tail, compress_start)
    if merge and keeps_provider_blocks(tail[0]):
        # A reply with signed thinking (or server-tool blocks) goes back to Anthropic exactly as
        # it came or not at all (its text is checked against its blocks): the summary stands on
        # its own as a user turn instead. Two user turns touching is valid for Anthropic (it combines them) and
        # OpenAI alike; a rewritten reply would lose the thinking the API requires first.
        merge, role = False, "user"
    has_user = any(m.get("role") == "user" for m in head) or any(m.get("role") == "user" for m in tail)
    block = frame_summary(body)
    meta = {SUMMARY_KEY: True, HAS_USER_TURN_KEY: has_user or role == "user", FALLBACK_KEY: fallback,
            OWNER_KEY: OWNER}
    if merge:
        first = _merge_into(tail[0], block, prepend=force_user and role == "user")
        first.update(meta)
        return [*head, first, *tail[1:]]
    summary = {"role": role, "content": compose_standalone(block), **meta}
    return [*head, summary, *tail]


def sanitize_tool_pairs(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The list made valid by the provider pairing rule; ``(list, repairs)``.

    ``hermes_core.pairing.repair_pairing`` with the newest assistant message's pending calls
    kept: separated results moved back when unambiguous, orphans and unanswered calls dropped
    with a counted note; never a result invented. The same list comes back when it was valid.
    """
    out, report = repair_pairing(messages, allow_pending=True)
    return out, report.changed


def _has_image(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in IMAGE_PART_TYPES for p in content
    )


def strip_historical_media(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Replace images before the last user message that has one; ``(list, images_removed)``."""
    anchor = -1
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.get("role") == "user" and _has_image(message):
            anchor = i
            break
    if anchor <= 0:
        return messages, 0
    out: list[dict[str, Any]] | None = None
    removed = 0
    for i in range(anchor):
        message = messages[i]
        if not _has_image(message):
            continue
        parts = []
        for part in message["content"]:
            if isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES:
                parts.append({"type": "text", "text": MEDIA_PLACEHOLDER})
                removed += 1
            else:
                parts.append(part)
        if out is None:
            out = list(messages)
        out[i] = {**{k: v for k, v in message.items() if k != "api_content"}, "content": parts}
    return (messages if out is None else out), removed


class Span:
    """The condensed middle ``[start, cut)`` of the pruned list, and what goes with it."""

    __slots__ = ("cut", "merged", "middle", "pinned", "positions", "start")

    def __init__(self, start: int, cut: int, pinned: dict[str, Any] | None, merged: bool,
                 middle: list[dict[str, Any]], positions: dict[int, int]) -> None:
        self.start = start
        self.cut = cut
        #: The newest request, kept live beside the summary (it is inside ``[start, cut)``).
        self.pinned = pinned
        #: Whether an earlier summary lies in the middle (its text merged into the turns).
        self.merged = merged
        self.middle = middle
        #: Where the planned results land in ``middle`` when ``merged`` (else empty).
        self.positions = positions


def assemble_span(plan: PrunePlan, span: Span, body: str, fallback: bool, report: dict[str, Any]) -> list[dict[str, Any]]:
    """The head, the framed summary (with the kept request beside it) and the tail, the tool
    pairs repaired and old media stripped; the report's phase counts set."""
    pruned, start, cut, pinned = plan.messages, span.start, span.cut, span.pinned
    # The tail the cut measured is built already; this builds what it did not read.
    plan.materialize_range(0, start)
    plan.materialize_range(cut, len(pruned))
    phases = report["phases"]
    phases["demoted"] = plan.demoted_between(0, start) + plan.demoted_between(cut, len(pruned))
    phases["demoted_in_summary"] = plan.demoted_between(start, cut) + plan.planned_between(start, cut)
    head, tail = pruned[:start], pruned[cut:]
    if pinned is not None:
        if head and head[-1].get("role") == "user":
            # Right after a head that ends on a user message the kept request would touch
            # it: it opens the tail instead, and the summary (an assistant turn) stands
            # between the two (a forced /compress of a short history, issue 29).
            tail = [pinned, *tail]
        else:
            head = [*head, pinned]
    assembled = assemble(head, body, tail, compress_start=len(head), fallback=fallback)
    assembled, repairs = sanitize_tool_pairs(assembled)
    assembled, stripped = strip_historical_media(assembled)
    phases["media_stripped"] += stripped
    phases["summarized_messages"] = cut - start - (1 if pinned is not None else 0)
    report["tool_pairs_repaired"] += repairs
    return assembled

"""Tool-call ids as the Messages API takes them, and how canonical messages join on its wire.

Anthropic rejects a repeated ``tool_use`` id and ids outside ``^[A-Za-z0-9_-]+$``; the
Responses API rejects a repeated call id. ``IdRenamer`` renames both reproducibly (a name
depends only on the messages before it, so cached prefixes keep their bytes). Shared by the
wire conversions (``payload``, ``responses``) and the per-message cache (``history``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["IdRenamer", "anthropic_id", "anthropic_ids", "joins", "renamed_blocks"]


#: The ids the Messages API takes for ``tool_use`` / ``tool_result`` (its documented pattern).
_ANTHROPIC_ID = re.compile(r"[A-Za-z0-9_-]+")


def anthropic_id(ident: str) -> str:
    """``ident`` as the Messages API takes it: the same when it matches ``^[A-Za-z0-9_-]+$``,
    else its other characters as ``_`` plus a short hash of the original (so two ids that
    differ only in those characters stay two). Other providers' ids such as
    ``functions.read_file:0`` would get the whole request rejected."""
    if not ident or _ANTHROPIC_ID.fullmatch(ident):
        return ident
    digest = hashlib.sha1(ident.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_-]', '_', ident)}_{digest}"


class IdRenamer:
    """Renames reused tool-call ids for Anthropic, which rejects a repeated ``tool_use`` id,
    and ids with characters it does not take (``anthropic_id``).

    The n-th call with an id (n >= 2) becomes ``<id>__r<n>``; a result takes the new id of the
    call it answers under ``hermes_core.pairing``'s rule (the nearest preceding unanswered call
    with its id, the first such within one message). A name depends only on the messages before
    it, so it stays the same on every later turn and the cached prefix stays byte-identical.
    Every step can be undone (``undo``), so the incremental path can rewind to an edit.
    """

    __slots__ = ("counts", "open", "sanitize")

    def __init__(self, *, sanitize: bool = True) -> None:
        self.counts: dict[str, int] = {}
        self.open: dict[str, list[tuple[int, str]]] = {}
        #: Whether ids get the Messages API's pattern (``anthropic_id``); the Responses API
        #: renames only reused ids.
        self.sanitize = sanitize

    def calls(self, index: int, ids: Sequence[str]) -> tuple[list[str], list[Any]]:
        """New ids for one assistant message's calls, and the undo log."""
        out: list[str] = []
        undo: list[Any] = []
        for ident in ids:
            count = self.counts.get(ident, 0) + 1
            self.counts[ident] = count
            base = anthropic_id(ident) if self.sanitize else ident
            new = base if count == 1 or not ident else f"{base}__r{count}"
            self.open.setdefault(ident, []).append((index, new))
            undo.append(("call", ident))
            out.append(new)
        return out, undo

    def result(self, ident: str) -> tuple[str, list[Any]]:
        stack = self.open.get(ident)
        if not stack:
            return ident, []
        newest = stack[-1][0]
        k = len(stack) - 1
        while k > 0 and stack[k - 1][0] == newest:
            k -= 1
        entry = stack.pop(k)
        return entry[1], [("result", ident, k, entry)]

    def undo(self, log: Sequence[Any]) -> None:
        for step in reversed(log):
            if step[0] == "call":
                ident = step[1]
                self.open[ident].pop()
                self.counts[ident] -= 1
            else:
                _, ident, k, entry = step
                self.open[ident].insert(k, entry)


def anthropic_ids(message: Mapping[str, Any], index: int, renamer: IdRenamer) -> tuple[Any, list[Any]]:
    """The renamed ids for one canonical message: a list (assistant calls), a str (tool result)
    or ``None`` (nothing to rename); and the undo log."""
    role = message.get("role")
    if role == "tool":
        ident = str(message.get("tool_call_id") or "")
        new, undo = renamer.result(ident)
        return (new if new != ident else None), undo
    calls = message.get("tool_calls")
    if role == "assistant" and calls:
        ids = [
            str(call.get("id") or call.get("call_id") or "") if isinstance(call, Mapping) else ""
            for call in calls
        ]
        new_ids, undo = renamer.calls(index, ids)
        return (new_ids if new_ids != ids else None), undo
    return None, []


def renamed_blocks(blocks: list[dict[str, Any]], ids: Any) -> list[dict[str, Any]]:
    """``blocks`` with the renamed ids of ``anthropic_ids`` applied (new block dicts)."""
    if ids is None:
        return blocks
    if isinstance(ids, str):
        return [{**b, "tool_use_id": ids} if b.get("type") == "tool_result" else b for b in blocks]
    out = []
    position = 0
    for block in blocks:
        if block.get("type") == "tool_use" and position < len(ids):
            block = {**block, "id": ids[position]}
            position += 1
        out.append(block)
    return out


def _is_result_group(wire: Mapping[str, Any]) -> bool:
    return wire["role"] == "user" and all(b.get("type") == "tool_result" for b in wire["content"])


def joins(previous: Mapping[str, Any], role: Any) -> bool:
    """Whether a canonical message of ``role`` goes into the wire message ``previous``: the
    Messages API combines consecutive turns of one role, so they are sent as one (strict
    alternation). Tool results join a group of tool results only (results come first in a
    user message); a user or system message joins any user message; an assistant message an
    assistant message."""
    if role == "tool":
        return _is_result_group(previous)
    return bool(previous["role"] == ("assistant" if role == "assistant" else "user"))

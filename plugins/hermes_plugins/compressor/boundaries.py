"""Phase 2, boundaries (§8): which messages stay verbatim at the head and the tail.

The head is the system prompt plus ``protect_first_n`` messages (decaying to none once the
session has been compressed; a head message over a tenth of the threshold is never protected);
the tail is cut by a token budget, walking back from the end. The cut never separates an
assistant's tool calls from their results, and the latest assistant reply stays verbatim. The
newest real user request is kept as a live message wherever the cut falls (``pinned_request``):
it is never reduced to a quote in a summary.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hermes_core.plugin import ANTHROPIC_CONTENT, content_text
from hermes_plugins.compressor.framing import (
    CONTINUATION_MARKER,
    is_summary_message,
)
from hermes_plugins.compressor.prune import (
    MAX_TAIL_MESSAGE_FLOOR,
    SOFT_CEILING_FACTOR,
    message_tokens,
)
from hermes_plugins.compressor.server_calls import SERVER_CALLS

Messages = Sequence[dict[str, Any]]

#: The tail keeps at least this many messages, whatever the budget says.
MIN_TAIL_MESSAGES = 3
#: When the whole history fits the tail budget, the tail keeps this share of its tokens.
FIT_KEEP_SHARE = 0.10
#: After a restart, a handoff within this many messages past the head means "already compressed".
RESUMED_HEAD_SLACK = 4


def _role(messages: Messages, i: int) -> Any:
    return messages[i].get("role")


def continues_turn(messages: Messages, i: int) -> bool:
    """Whether ``messages[i]`` goes on with the assistant turn before it: an Anthropic reply
    holding a server tool's result whose call is in an earlier message (a turn the API paused,
    ``pause_turn``, and continued). The Messages API reads consecutive assistant messages as
    one; a cut between them would send a result without its call, which it rejects.

    A result is any block of the reply that names a ``tool_use_id`` (in an assistant message
    only a server tool's result does: web search, MCP, the advisor's, and result types that
    come after them), so no list of result types can fall behind the API."""
    if i <= 0 or i >= len(messages) or _role(messages, i) != "assistant" or _role(messages, i - 1) != "assistant":
        return False
    blocks = messages[i].get(ANTHROPIC_CONTENT)
    if not isinstance(blocks, list):
        return False
    calls = {b.get("id") for b in blocks if isinstance(b, dict) and b.get("type") in SERVER_CALLS}
    return any(isinstance(b, dict) and b.get("tool_use_id") is not None and b.get("tool_use_id") not in calls
               for b in blocks)


def align_forward(messages: Messages, index: int) -> int:
    """Move ``index`` past tool results (and the rest of a continued turn) so a region never
    starts with an orphan result."""
    n = len(messages)
    while index < n and (_role(messages, index) == "tool" or continues_turn(messages, index)):
        index += 1
    return index


def align_backward(messages: Messages, index: int) -> int:
    """Move ``index`` back onto the assistant whose tool results precede it, if any, and onto
    the start of an assistant turn the API continued (``continues_turn``).

    The whole call-plus-results group then lands on the same side of the cut.
    """
    if index <= 0 or index >= len(messages):
        return index
    while continues_turn(messages, index):
        index -= 1
    j = index - 1
    while j >= 0 and _role(messages, j) == "tool":
        j -= 1
    if j >= 0 and _role(messages, j) == "assistant" and messages[j].get("tool_calls"):
        return j
    return index


def min_tail_messages(n: int, head_end: int, protect_last_n: int) -> int:
    available = max(0, n - head_end - 1)
    floor = max(MIN_TAIL_MESSAGES, min(protect_last_n, MAX_TAIL_MESSAGE_FLOOR))
    cap = max(MIN_TAIL_MESSAGES, available - 2)
    return min(floor, cap, available) if available > 1 else 0


def is_actionable_user(message: dict[str, Any]) -> bool:
    """A real user turn: not a summary, not blank, not a continuation marker, not a message an
    agent injected (``_injected``) or an in-context demonstration (``_demonstration``)."""
    if message.get("role") != "user" or message.get("_injected") or message.get("_demonstration"):
        return False
    content = message.get("content")
    if isinstance(content, list):
        has_media = any(isinstance(p, dict) and p.get("type") not in (None, "text") for p in content)
        if not content_text(content).strip() and not has_media:
            return False
    else:
        text = content_text(content).strip()
        if not text or text == CONTINUATION_MARKER:
            return False
    return not is_summary_message(message)


def last_actionable_user(messages: Messages, start: int) -> int:
    for i in range(len(messages) - 1, start - 1, -1):
        if is_actionable_user(messages[i]):
            return i
    return -1


def _has_text(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                for key in ("text", "content"):
                    value = part.get(key)
                    if isinstance(value, str) and value.strip():
                        return True
    return False


def last_assistant(messages: Messages, start: int) -> int:
    """The latest assistant reply with text (else any assistant) at or after ``start``."""
    fallback = -1
    for i in range(len(messages) - 1, start - 1, -1):
        message = messages[i]
        if message.get("role") != "assistant" or is_summary_message(message):
            continue
        if _has_text(message):
            return i
        if fallback == -1:
            fallback = i
    return fallback


def _turn_end(messages: Messages, user_index: int) -> int:
    """Index just past a user turn's first exchange (user -> assistant -> its tool results)."""
    n = len(messages)
    j = user_index + 1
    if j < n and _role(messages, j) == "assistant":
        j += 1
        while j < n and _role(messages, j) == "tool":
            j += 1
    return j


def _walk(
    messages: Messages, head_end: int, budget: int, min_tail: int,
    tokens: Callable[[dict[str, Any]], int],
) -> tuple[int, int]:
    """``(cut, tokens walked)``: back from the end under 1.5x the budget, else the plain budget."""
    n = len(messages)
    ceiling = int(budget * SOFT_CEILING_FACTOR)
    acc = 0
    cut = n
    for i in range(n - 1, head_end - 1, -1):
        size = tokens(messages[i])
        if acc + size > ceiling and (n - i) >= min_tail:
            break
        acc += size
        cut = i
    if cut <= head_end and 0 < acc <= ceiling:
        # Everything fitted under the soft ceiling: cut by the plain budget instead.
        walked = 0
        for j in range(n - 1, head_end - 1, -1):
            size = tokens(messages[j])
            if walked + size > budget and (n - j) >= min_tail:
                cut = j
                break
            walked += size
    return cut, acc


def _plain_cut(
    messages: Messages, head_end: int, budget: int, min_tail: int,
    tokens: Callable[[dict[str, Any]], int],
) -> int:
    """The cut that keeps at most ``budget`` tokens (and at least ``min_tail`` messages)."""
    n = len(messages)
    walked = 0
    cut = n
    for j in range(n - 1, head_end - 1, -1):
        size = tokens(messages[j])
        if walked + size > budget and (n - j) >= min_tail:
            break
        walked += size
        cut = j
    return cut


def _condensable(
    messages: Messages, head_end: int, tokens: Callable[[dict[str, Any]], int], stop: int | None = None,
) -> int:
    """Tokens after the head, earlier summaries not counted (they are rewritten anyway); the
    count ends once it passes ``stop`` (a long history is not walked whole for a "no")."""
    total = 0
    for i in range(head_end, len(messages)):
        message = messages[i]
        if message.get("role") == "tool" or not is_summary_message(message):
            total += tokens(message)
            if stop is not None and total > stop:
                break
    return total


def find_tail_cut(
    messages: Messages,
    head_end: int,
    budget: int,
    protect_last_n: int,
    tokens: Callable[[dict[str, Any]], int] = message_tokens,
    *,
    free_at_least: int = 0,
) -> int:
    """Index where the verbatim tail starts (§8.3); everything in ``[head_end, cut)`` is middle.

    ``free_at_least`` (a forced compression passes what its free passes left of the tail budget
    to free): the middle holds at least that many tokens when the history has them beyond the
    newest tenth. Without it a history a
    little over the budget condenses only the excess while a slightly shorter one condenses
    nine tenths (a 7.8k-token session saved 8% at a 32k window and 51% at 64k).
    """
    n = len(messages)
    min_tail = min_tail_messages(n, head_end, protect_last_n)
    cut, acc = _walk(messages, head_end, budget, min_tail, tokens)
    if cut <= head_end and 0 < acc <= budget:
        acc = _condensable(messages, head_end, tokens)
        # The whole history fits the budget: the tail keeps the newest tenth of it (at least
        # the minimum tail), so the oldest part is condensed rather than everything but
        # the minimum tail.
        cut, _ = _walk(messages, head_end, max(1, int(acc * FIT_KEEP_SHARE)), min_tail, tokens)
    elif free_at_least > 0 and cut > head_end:
        kept = sum(tokens(messages[i]) for i in range(cut, n))  # the tail: at most 1.5x the budget
        total = _condensable(messages, head_end, tokens, stop=kept + free_at_least)
        if total - kept < free_at_least:
            keep = max(int(total * FIT_KEEP_SHARE), total - free_at_least)
            cut = max(cut, _plain_cut(messages, head_end, max(1, keep), min_tail, tokens))
    cut = min(cut, n - min_tail)
    if cut <= head_end:
        cut = max(n - min_tail, head_end + 1)
    cut = align_backward(messages, cut)

    reply = last_assistant(messages, head_end)
    if 0 <= reply < cut:
        cut = max(align_backward(messages, reply), head_end + 1)
    return align_forward(messages, max(cut, head_end + 1))


def keep_bridge(messages: Messages, compress_start: int, cut: int) -> int:
    """When the tail would start at the latest request, keep what it answers too (§8.4)."""
    if cut >= len(messages) or cut <= compress_start:
        return cut
    if last_actionable_user(messages, cut) != cut:
        return cut
    bridge = cut - 1
    if _role(messages, bridge) == "tool":
        bridge = align_backward(messages, cut)
    if _role(messages, bridge) != "assistant":
        return cut
    while continues_turn(messages, bridge):  # the whole turn, its server calls with their results
        bridge -= 1
    return bridge if bridge > compress_start else cut


def pinned_request(messages: Messages, start: int, cut: int) -> int:
    """The newest real user request when it falls in ``[start, cut)`` (to keep live), else -1."""
    user = last_actionable_user(messages, start)
    return user if start <= user < cut else -1

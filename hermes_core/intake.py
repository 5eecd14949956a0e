"""A forced compression's one pass over the host's history: everything it needs read at once.

Each pass over a long history is mostly memory traffic, so ``read_history`` reads in one pass
the messages as OpenAI-format dicts, their estimate, a proof of their pairing and, when a plugin
records compactions, the archive's columns - each tested against the function it stands in for.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

import attrs

from hermes_core.conversion import ANTHROPIC_CONTENT
from hermes_core.errors import InvalidMessagesError
from hermes_core.history_scan import REF_KEY, HistoryScan, is_plain
from hermes_core.messages import LEGACY_CONTEXT
from hermes_core.sdk import _expand, normalize_messages
from hermes_core.tokens import MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens

__all__ = ["HistoryRead", "read_history"]


@attrs.define(kw_only=True, slots=True)
class HistoryRead:
    """What ``read_history`` read. ``proven``: valid by the pairing rule, shown in the usual form
    (``False`` says "not shown", never "invalid"); ``scan``: the archive's columns, when asked."""

    messages: list[dict[str, Any]]
    estimate: int
    proven: bool
    scan: HistoryScan | None = None


def _ordered_ids(calls: Any) -> list[str] | None:
    """The call ids of a ``tool_calls`` list when every call is a dict with a non-empty string
    id (``pairing_problems``' usual form), else None."""
    if type(calls) is not list:
        return None
    ids: list[str] = []
    for call in calls:
        ident = (call.get("id") or call.get("call_id")) if type(call) is dict else None
        if type(ident) is not str or not ident:
            return None
        ids.append(ident)
    return ids


def _pairing_step(message: dict[str, Any], want: list[str] | None, k: int) -> tuple[bool, list[str] | None, int]:
    """One message of the usual-form proof: ``(still proven, the ids the open block waits
    for, how many came)`` (the inline form in ``read_history`` does the same)."""
    role = message.get("role")
    if role == "tool":
        if want is None or message.get("tool_call_id") != want[k]:
            return False, None, 0
        k += 1
        return True, (None if k == len(want) else want), k
    if want is not None:
        return False, None, 0
    calls = message.get("tool_calls")
    if calls and role == "assistant":
        want = _ordered_ids(calls)
        return want is not None, want, 0
    return True, None, 0


def _scan_step(scan: HistoryScan, message: dict[str, Any]) -> None:
    """One message into the archive's columns (the inline form in ``read_history`` does the same)."""
    role = message.get("role")
    at = len(scan.roles)
    scan.roles.append(role)
    content = scan.contents[at] = message.get("content")
    call_id = None
    if role == "tool":
        call_id = scan.call_ids[at] = message.get("tool_call_id")
    if not is_plain(message, role, content, call_id):
        _hold_odd(scan, at, message, role)


def _hold_odd(columns: HistoryScan, index: int, message: dict[str, Any], role: Any) -> None:
    """Keep a message that is not plain (``is_plain``) whole, and note the archive reference or
    the summary key it carries: only such a message can hold either."""
    columns.odd[index] = message
    if message.get(REF_KEY):
        columns.marked.append(index)
    elif role == "user" and (message.get("_summary") or message.get("_compressed_summary")):
        columns.summaries.append(index)


def _calls_read(message: dict[str, Any], content: Any, calls: Any) -> tuple[int, list[str] | None]:
    """``(estimate_message_tokens(message), _ordered_ids(calls))`` of a message with calls, in
    one visit of calls of the usual shape (any other goes to those two)."""
    if type(content) is str and type(calls) is list and len(message) <= 3:
        chars = len(content)
        ids: list[str] | None = []
        for call in calls:
            fn = call.get("function") if type(call) is dict else None
            if type(fn) is not dict:
                break
            args = fn.get("arguments")
            name = fn.get("name")
            if type(args) is not str or type(name) is not str:
                break
            chars += len(args) + len(name) + 40
            ident = call.get("id") or call.get("call_id")
            if ids is not None:
                if type(ident) is str and ident:
                    ids.append(ident)
                else:
                    ids = None
        else:
            return (chars + 3) // 4 + MESSAGE_OVERHEAD_TOKENS, ids
    return estimate_message_tokens(message), _ordered_ids(calls)


def _odd_tool(columns: HistoryScan | None, index: int, message: dict[str, Any], content: Any,
              call_id: Any) -> int:
    """A tool result that is not plain (``is_plain``): its estimate, and its columns when asked."""
    if columns is not None:
        columns.roles.append("tool")
        columns.contents[index] = content
        columns.call_ids[index] = call_id
        _hold_odd(columns, index, message, "tool")
    return estimate_message_tokens(message)


def _note_other(columns: HistoryScan, index: int, message: dict[str, Any], role: Any, content: Any,
                calls: Any) -> None:
    """A message that is no tool result (and has no content parts) into the archive's columns."""
    columns.roles.append(role)
    columns.contents[index] = content
    if calls or type(content) is not str or len(message) != 2 or type(role) is not str or role == "":
        _hold_odd(columns, index, message, role)


def _short_text(message: dict[str, Any]) -> bool:
    """Whether a text message without calls is priced by its text alone: three keys at most,
    and not an Anthropic reply whose kept blocks are what goes on the wire (role, content and
    ``_anthropic_content``: search pages, thinking)."""
    size = len(message)
    return size < 3 or (size == 3 and ANTHROPIC_CONTENT not in message)


def _read_plain(
    messages: list[Any], columns: HistoryScan | None
) -> tuple[int, int, list[str] | None, int]:
    """``read_history`` over the longest prefix of ``messages`` that is dicts without content
    parts (nothing to normalise) and still proven: ``(where it stopped, estimate so far, the
    open block's ids, how many came)``. The message it stops at is left for the general loop
    untouched. The same work as that loop's, less its bookkeeping (an output list that may
    diverge, a position that may differ from the index, a proof that may have failed), with a
    plain tool result (the most common message) read in one branch."""
    total = 0
    want: list[str] | None = None
    k = 0
    scan = columns is not None
    if columns is not None:
        roles, contents, call_ids = columns.roles.append, columns.contents, columns.call_ids
    index = 0
    overhead = MESSAGE_OVERHEAD_TOKENS
    for message in messages:
        if type(message) is not dict:
            break
        content: Any = message.get("content")
        text = type(content) is str
        if not text and content is not None and type(content) is not dict:
            break  # content parts to convert, or a shape no provider takes: the general loop
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if want is None or call_id != want[k]:
                break
            # The proof made ``call_id`` a non-empty string's equal. Plain (``is_plain``): no
            # key but these, so no calls, reference or summary key.
            size = len(message)
            if text and (size == 2 or (size == 3 and type(call_id) is str)):
                total += (len(content) + 3) // 4 + overhead
                if scan:
                    roles(role)
                    contents[index] = content
                    call_ids[index] = call_id
            else:
                total += _odd_tool(columns, index, message, content, call_id)
            k += 1
            want = None if k == len(want) else want
            index += 1
            continue
        if want is not None or role == "function" or message.get("function_call") is not None:
            break  # (deprecated function calling: the general loop converts it)
        calls = message.get("tool_calls")
        if calls:
            tokens, ids = _calls_read(message, content, calls)
            if role == "assistant" and ids is None:
                break  # calls the proof cannot follow: the general loop says "not proven"
            want, k = (ids if role == "assistant" else None), 0
            total += tokens
        elif text and _short_text(message):
            total += (len(content) + 3) // 4 + overhead
        elif "type" in message:  # a Responses item: the general loop converts it
            break
        else:
            total += estimate_message_tokens(message)
        if columns is not None:
            _note_other(columns, index, message, role, content, calls)
        index += 1
    return index, total, want, k


def _has_responses_items(messages: Sequence[Any], start: int) -> bool:
    """Whether the messages from ``start`` on may hold Responses items (a typed dict, an SDK
    object) or deprecated function calling (a result answers the call before it): only the
    part ``_read_plain`` could not read is looked at."""
    for message in islice(messages, start, None):
        if type(message) is not dict or "type" in message or message.get("role") == "function" \
                or message.get("function_call") is not None:
            return True
    return False


def _note_read(columns: HistoryScan, position: int, message: dict[str, Any], role: Any, content: Any,
               call_id: Any, calls: Any) -> None:
    """``_scan_step`` of a message without content parts, reusing what ``_read_rest`` read: a
    plain message (``is_plain``) has no other key, so no reference or summary key to read."""
    columns.roles.append(role)
    columns.contents[position] = content
    if role == "tool":
        columns.call_ids[position] = call_id
        size = len(message)
        plain = (size == 2 or (size == 3 and type(call_id) is str and call_id != "")) \
            and type(content) is str
    else:
        plain = not calls and len(message) == 2 and type(content) is str \
            and type(role) is str and role != ""
    if not plain:
        _hold_odd(columns, position, message, role)


def _read_converted(
    expanded: list[dict[str, Any]], columns: HistoryScan | None, proven: bool,
    want: list[str] | None, k: int,
) -> tuple[int, bool, list[str] | None, int]:
    """The messages one input became (an SDK object, content parts): ``(their estimate, still
    proven, want, k)``, and their columns when asked."""
    total = 0
    for converted in expanded:
        total += estimate_message_tokens(converted)
        if proven:
            proven, want, k = _pairing_step(converted, want, k)
        if columns is not None:
            _scan_step(columns, converted)
    return total, proven, want, k


def _estimate_checked(message: dict[str, Any], content: Any, index: int) -> int:
    # A message without calls whose content is neither text, parts nor null: refused by index
    # (no provider takes a number for content), else estimated.
    if content is not None and type(content) is not str and type(content) is not dict:
        raise InvalidMessagesError(f"message {index}: content must be a string, a list or null", index=index)
    return estimate_message_tokens(message)


def _read_rest(
    messages: Sequence[Any], start: int, columns: HistoryScan | None, total: int,
    want: list[str] | None, k: int,
) -> tuple[list[dict[str, Any]], int, bool]:
    """``read_history`` from ``start`` on, message by message: ``(normalised messages, their
    estimate, whether their pairing is proven)``, carrying on ``_read_plain``'s ``total``,
    ``want`` and ``k``. One loop with the common case inline (this may be most of a history)."""
    out: list[dict[str, Any]] | None = None
    # The pairing proof, inline for plain messages (``_pairing_step`` for converted ones):
    # ``want`` the ids of the open block's calls, ``k`` how many of them were answered.
    proven = True
    position = start  # in the normalised list
    for index, message in enumerate(islice(messages, start, None), start):
        # Neither an SDK object nor content parts: read as it is.
        if type(message) is dict and type(content := message.get("content")) is not list:
            if out is not None:
                out.append(message)
            calls = message.get("tool_calls")
            ids: list[str] | None = None
            if calls:
                tokens, ids = _calls_read(message, content, calls)
                total += tokens
            elif type(content) is str and _short_text(message):
                # ``estimate_message_tokens`` of a plain text message, inline (one of more
                # than three keys may carry reasoning or ``_`` payloads it counts).
                total += (len(content) + 3) // 4 + MESSAGE_OVERHEAD_TOKENS
            else:
                total += _estimate_checked(message, content, index)
            role = message.get("role")
            call_id = message.get("tool_call_id") if role == "tool" else None
            if columns is not None:
                _note_read(columns, position, message, role, content, call_id, calls)
            position += 1
            if proven:
                if role == "tool":
                    if want is None or call_id != want[k]:
                        proven = False
                    else:
                        k += 1
                        want = None if k == len(want) else want
                elif want is not None:
                    proven = False
                elif calls and role == "assistant":
                    want, k = ids, 0
                    proven = ids is not None
            continue
        expanded = _expand(message)
        tokens, proven, want, k = _read_converted(expanded, columns, proven, want, k)
        total += tokens
        position += len(expanded)
        if out is None:
            if len(expanded) == 1 and expanded[0] is message:
                continue
            out = list(messages[:index])
        out.extend(expanded)
    if out is None:
        out = messages if isinstance(messages, list) else list(messages)
    return out, total, proven


def read_history(messages: Sequence[Any], *, scan: bool = False) -> HistoryRead:
    """The one pass (see the module doc): ``messages`` normalised, estimated, its pairing proven
    in the usual form - every assistant message's calls carry non-empty string ids and their
    results follow it one per call, in the calls' order, then a message that is not a tool
    result (or the end of the list: calls still in flight) - and, with ``scan``, the archive's
    columns of the normalised list.

    A list is read by ``_read_plain`` as long as it can; what is left (SDK objects, content
    parts to convert, a list not in the usual form), message by message by ``_read_rest``."""
    columns = HistoryScan() if scan else None
    start = total = k = 0
    want: list[str] | None = None
    if type(messages) is list:
        start, total, want, k = _read_plain(messages, columns)
        if start == len(messages):
            return HistoryRead(messages=messages, estimate=total, proven=True, scan=columns)
    if _has_responses_items(messages, start):
        # Runs of Responses items convert as runs (one assistant message per turn), which the
        # message-by-message loop cannot do: converted first, read as converted.
        # (From LEGACY_CONTEXT messages earlier: a deprecated function call's id depends on them.)
        begin = max(0, start - LEGACY_CONTEXT)
        messages = [*islice(messages, begin), *normalize_messages(list(islice(messages, begin, None)))]
    out, total, proven = _read_rest(messages, start, columns, total, want, k)
    return HistoryRead(messages=out, estimate=total, proven=proven, scan=columns)


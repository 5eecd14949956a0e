"""The diff of one compaction: which messages of the list the engine got were kept (identity,
then a content hash for an engine that copies), what stands for each removed run, and the one
pass over the messages that reads what the archive keeps of them (or takes the session's own,
``ContextEngine.input_scan``)."""

from __future__ import annotations

import bisect
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import xxhash

from hermes_core.plugin import REF_KEY, HistoryScan
from hermes_plugins.archive.search import _call_line, message_text


def _content_key(message: Mapping[str, Any]) -> int:
    content = message.get("content")
    text = content if isinstance(content, str) else repr(content)
    calls = message.get("tool_calls")
    extra = repr(calls) if calls else ""
    return xxhash.xxh3_64_intdigest(
        f"{message.get('role')}\x00{message.get('tool_call_id', '')}\x00{extra}\x00{text}"
        .encode("utf-8", "surrogatepass")
    )


def kept_positions(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each message of ``before``, its position in ``after`` when it was kept, else -1.

    Identity first; when most of ``after`` are new objects (an engine that copies), the rest
    are matched by a content hash of role, call id, tool calls and content.
    """
    where = {id(m): i for i, m in enumerate(after)}
    return _match_copies(before, after, list(map(where.get, map(id, before), itertools.repeat(-1))))


def _match_copies(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], out: list[int]
) -> list[int]:
    """``out`` (kept positions by identity) completed by content for an engine that copies."""
    new_after = len(after) - (len(out) - out.count(-1))
    if new_after > 2 and new_after * 2 > len(after):
        used = {p for p in out if p >= 0}
        by_key: dict[int, list[int]] = {}
        for i, m in enumerate(after):
            if i not in used:
                by_key.setdefault(_content_key(m), []).append(i)
        for j, m in enumerate(before):
            if out[j] < 0:
                slots = by_key.get(_content_key(m))
                if slots:
                    out[j] = slots.pop(0)
    return out


def replacement_map(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], kept: Sequence[int]
) -> dict[int, int]:
    """``before`` index of each removed message -> ``after`` index of what stands for it.

    Between two kept messages, the removed run is paired with the new messages of ``after`` in
    the same place: one to one when the counts agree, else a tool result to the new result with
    its call id, everything else to the longest new message (a summary, a marker). A removed
    run with no new message beside it maps to nothing (dropped).
    """
    mapping: dict[int, int] = {}
    for start, end, target in replacement_runs(before, after, kept):
        if isinstance(target, list):
            mapping.update(zip(range(start, end), target))
        elif target >= 0:
            mapping.update(dict.fromkeys(range(start, end), target))
    return mapping


def replacement_runs(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], kept: Sequence[int],
    call_ids: Sequence[Any] | Mapping[int, Any] | None = None,
) -> list[tuple[int, int, int | list[int]]]:
    """``replacement_map`` by removed run: ``(start, end, target)``, ``target`` the ``after``
    index the whole run maps to (-1: dropped) or, for a run that maps message by message, the
    list of its messages' targets. Only the kept positions and the new messages are visited, so a run of
    100k removed messages costs what its few neighbours do. ``call_ids`` (optional): the
    ``tool_call_id`` of each tool result of ``before`` by position (None for other messages; a
    dict holds the tool results' positions only), read in the caller's one pass over the messages."""
    kept_after = set(kept)
    kept_after.discard(-1)
    runs: list[tuple[int, int, int | list[int]]] = []
    n = len(before)
    prev_after = -1
    start = 0
    for stop in [*itertools.compress(range(n), map(operator.ge, kept, itertools.repeat(0))), n]:
        if stop > start:
            next_after = kept[stop] if stop < n else len(after)
            if next_after < prev_after:
                next_after = len(after) if stop >= n else prev_after + 1
            new = [i for i in range(prev_after + 1, next_after) if i not in kept_after]
            runs.append((start, stop, _run_target(before, after, range(start, stop), new, call_ids)))
        if stop < n:
            prev_after = kept[stop]
        start = stop + 1
    return runs


def _run_target(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], run: range, new: list[int],
    call_ids: Sequence[Any] | Mapping[int, Any] | None,
) -> int | list[int]:
    if not new:
        return -1
    if len(new) == len(run):
        return new
    by_call: dict[str, int] = {}
    for i in new:
        call_id = after[i].get("tool_call_id")
        if after[i].get("role") == "tool" and isinstance(call_id, str) and call_id:
            by_call.setdefault(call_id, i)
    biggest = max(new, key=lambda i: len(message_text(after[i])))
    if not by_call:  # a summary or marker for the whole run: no message of it is read
        return biggest
    if isinstance(call_ids, dict):
        # The tool results' positions (the dict's keys, ascending) within the run: only those
        # can map elsewhere than to the biggest new message.
        at = list(call_ids)
        tools = at[bisect.bisect_left(at, run.start):bisect.bisect_left(at, run.stop)]
        targets = [biggest] * len(run)
        try:
            found = list(map(by_call.get, map(call_ids.__getitem__, tools), itertools.repeat(biggest)))
        except TypeError:  # an unhashable call id
            found = [by_call.get(cid, biggest) if type(cid) is str else biggest for cid in map(call_ids.__getitem__, tools)]
        moved = list(map(operator.ne, found, itertools.repeat(biggest)))
        for j, target in zip(itertools.compress(tools, moved), itertools.compress(found, moved)):
            if type(call_ids[j]) is str:  # (only a string call id names a result: a key equal to it is not)
                targets[j - run.start] = target
        return targets
    if isinstance(call_ids, Sequence):
        get = by_call.get
        return [biggest if type(cid) is not str else get(cid, biggest) for cid in call_ids[run.start:run.stop]]
    out: list[int] = []
    for b in run:
        call_id = before[b].get("tool_call_id")
        mapped = by_call.get(call_id) if before[b].get("role") == "tool" and isinstance(call_id, str) else None
        out.append(biggest if mapped is None else mapped)
    return out


def _scan(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]], scan: HistoryScan | None = None
) -> tuple[list[int], list[Any], dict[int, Any], dict[int, Any], dict[int, dict[str, Any]], set[int] | None]:
    """One pass over the messages (at 100k each pass over the host's dicts costs ~20 ms of
    cache misses): per position where ``after`` kept it (``kept_positions``), its role
    (``_EARLIER`` for a replacement of an earlier compaction), its content (the snapshot the
    archive keeps), a tool result's call id and the message when it is not plain (the
    ``HistoryScan`` columns, by position); and the positions of the user messages that are
    summaries when known (held: no pass at all; None: ``_records`` asks the users)."""
    where = {id(m): i for i, m in enumerate(after)}.get
    if scan is not None:
        # Only the list's pointers are read here (``id``), never the message dicts.
        kept = list(map(where, map(id, before), itertools.repeat(-1)))
        tags = scan.roles
        if scan.marked:
            tags = list(tags)
            for j in scan.marked:
                tags[j] = _EARLIER
        return (_match_copies(before, after, kept), tags, scan.contents, scan.call_ids, scan.odd,
                set(scan.summaries))
    kept = []
    tags = []
    contents: dict[int, Any] = {}
    call_ids: dict[int, Any] = {}
    odd: dict[int, dict[str, Any]] = {}
    keep = kept.append
    tag = tags.append
    for j, m in enumerate(before):
        keep(where(id(m), -1))
        role = m.get("role")
        content = contents[j] = m.get("content")
        # ``is_plain``, inline: a plain message has no other key, so no reference to read.
        size = len(m)
        if role == "tool":
            call_id = call_ids[j] = m.get("tool_call_id")
            if type(content) is str and (size == 2 or (size == 3 and type(call_id) is str and call_id != "")):
                tag(role)
                continue
        elif size == 2 and type(content) is str and type(role) is str and role != "":
            tag(role)
            continue
        odd[j] = m  # type: ignore[assignment]
        tag(_EARLIER if m.get(REF_KEY) else role)
    return _match_copies(before, after, kept), tags, contents, call_ids, odd, None


#: The tag of a message that carries a reference already (a replacement of an earlier compaction).
_EARLIER = object()


def _is_turn_start(message: Mapping[str, Any]) -> bool:
    return (
        message.get("role") == "user" and not message.get(REF_KEY)
        and not message.get("_summary") and not message.get("_compressed_summary")
    )


def _tool_names(
    messages: Sequence[Mapping[str, Any]] | Mapping[int, Mapping[str, Any]], roles: Sequence[Any] | None = None,
    texts_for: Iterable[int] = (),
) -> tuple[dict[str, str], dict[int, str]]:
    """Call id -> tool name, from the calls of the assistant messages (a reused id: the last
    call's), and the ``[tool call name] arguments`` lines of the assistant messages at the
    positions ``texts_for`` (``message_text``'s, read in the same visit of their calls).

    ``roles`` (optional): each message's role as the request path read it (``_EARLIER`` for a
    replacement, whose role is read again), so only the assistant messages are visited.
    ``messages`` may be a dict of the positions that are not plain (``HistoryScan.odd``): a
    plain message has no calls.
    """
    names: dict[str, str] = {}
    lines_at: dict[int, str] = {}
    wanted = set(texts_for)
    if roles is None:
        assert not isinstance(messages, Mapping)
        roles = [m.get("role") for m in messages]
    at = messages.get if isinstance(messages, dict) else messages.__getitem__
    for j in [j for j, r in enumerate(roles) if r == "assistant" or r is _EARLIER]:
        message = at(j)
        if message is None:
            continue
        calls = message.get("tool_calls")
        if not calls or not isinstance(calls, list) or message.get("role") != "assistant":
            continue
        lines: list[str] | None = [] if j in wanted else None
        for call in calls:
            # ``type() is dict`` first: an ABC isinstance costs ~0.3 us, per call of 100k messages.
            if not (type(call) is dict or isinstance(call, Mapping)):
                continue
            fn = call.get("function")
            if type(fn) is dict or isinstance(fn, Mapping):
                name = fn.get("name")
                if lines is not None:
                    lines.append(_call_line(fn))
            else:
                name = call.get("name")
            call_id = call.get("id")
            # An id-less call names nothing: "" is also the call id column of every message
            # that has none.
            if call_id and isinstance(call_id, str) and isinstance(name, str):
                names[call_id] = name
        if lines:
            lines_at[j] = "\n".join(lines)
    return names, lines_at


_PLAIN_KEYS = frozenset({"role", "content", "tool_call_id"})


def _extra_of(message: Mapping[str, Any]) -> dict[str, Any] | None:
    """What the text and the entry's columns leave out, to give the host the message back whole
    (``original_message``); None when they hold it all, as for most messages (a role, a string
    content, a call id): one dict fewer per archived message, which at 100k messages is most
    of the archive's cost on the request path (allocation and the garbage collector)."""
    content = message.get("content")
    role = message.get("role")
    if (
        type(content) is str and type(role) is str and role and message.keys() <= _PLAIN_KEYS
        and ("tool_call_id" not in message or (type(message["tool_call_id"]) is str and message["tool_call_id"]))
    ):
        return None
    extra = {k: v for k, v in message.items() if k != "content"}
    if not isinstance(message.get("content"), str) or "tool_calls" in message:
        extra["content"] = message.get("content")
    return extra

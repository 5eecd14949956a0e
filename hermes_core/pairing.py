"""The tool-call pairing rule, the one place it is written down.

Providers reject calls and results that do not line up, and reuse call ids, so pairing by id
alone is wrong. Everything that pairs messages goes through ``match_results`` (or
``answered_in_order`` for one assistant message's usual form); every check of an output through
``pairing_problems``. The rule: docs/message-model.md, "The tool-call pairing rule".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.diagnostics import record_warning
from hermes_core.logging import get_logger

__all__ = [
    "TOOL_CALL_REMOVED",
    "Match",
    "PairingGuard",
    "PairingRepair",
    "answered_in_order",
    "call_ids_of",
    "early_answers",
    "is_valid_pairing",
    "match_results",
    "pairing_problems",
    "pending_calls",
    "repair_pairing",
]

log = get_logger(__name__)

#: ``(assistant index, call position)`` a tool result answers.
Match = tuple[int, int]


def call_ids_of(message: Mapping[str, Any]) -> list[str]:
    """The ids of an assistant message's tool calls, by position (``""`` for an id-less call)."""
    calls = message.get("tool_calls")
    if not calls:
        return []
    out: list[str] = []
    for call in calls:
        if isinstance(call, Mapping):
            out.append(str(call.get("id") or call.get("call_id") or ""))
        else:
            out.append("")
    return out


def match_results(messages: Sequence[Mapping[str, Any]]) -> tuple[dict[int, Match], list[Match]]:
    """Pair every tool result with the call it answers.

    Returns ``(answers, unanswered)``: ``answers`` maps a tool message's index to the
    ``(assistant index, call position)`` it answers (an orphan result is absent), and
    ``unanswered`` lists the calls no result answers, in order.
    """
    # id -> its open calls: one ``Match`` while only one is open (nearly every id: no list per
    # call over 100k-message histories), else a list of them, oldest first; the nearest is at
    # the end (same message: the run of entries with the newest assistant index, of which the
    # first is taken). A list is never empty: the id goes when its last call is answered.
    open_calls: dict[str, Any] = {}
    answers: dict[int, Match] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            ident = message.get("tool_call_id")
            if type(ident) is not str:
                ident = str(ident or "")
            entry = open_calls.get(ident)
            if entry is None:
                continue
            if type(entry) is tuple:
                answers[index] = entry
                del open_calls[ident]
                continue
            newest = entry[-1][0]
            k = len(entry) - 1
            while k > 0 and entry[k - 1][0] == newest:
                k -= 1
            answers[index] = entry.pop(k)
            if not entry:
                del open_calls[ident]
        elif role == "assistant":
            calls = message.get("tool_calls")
            if not calls:
                continue
            position = 0
            for call in calls:
                # The same ids as ``call_ids_of``, inline: this loop runs once per call.
                if type(call) is dict or isinstance(call, Mapping):
                    ident = call.get("id") or call.get("call_id") or ""
                    if type(ident) is not str:
                        ident = str(ident)
                else:
                    ident = ""
                match = (index, position)
                entry = open_calls.get(ident)
                if entry is None:
                    open_calls[ident] = match
                elif type(entry) is tuple:
                    open_calls[ident] = [entry, match]
                else:
                    entry.append(match)
                position += 1
    unanswered = sorted(
        match for entry in open_calls.values() for match in ((entry,) if type(entry) is tuple else entry)
    )
    return answers, unanswered


def early_answers(
    messages: Sequence[Mapping[str, Any]], answers: Mapping[int, Match], unanswered: Sequence[Match]
) -> dict[int, Match]:
    """Orphan results stored just *before* the call they answer, re-attached: ``{result index:
    (assistant index, call position)}`` (``answers`` and ``unanswered`` from ``match_results``).

    Some recorders write a result ahead of its call (a log flushed out of order). Such a result
    answers a call only when nothing but tool messages stands between it and the assistant
    message that makes the call, and that call is unanswered; within that message the first
    such call of its id is taken, as ``match_results`` takes it. Anything else stays an orphan:
    a result is never paired by its id across other turns.
    """
    if not unanswered:
        return {}
    open_ids: dict[int, dict[str, list[int]]] = {}
    for at, position in unanswered:
        calls = messages[at].get("tool_calls") or []
        call = calls[position] if position < len(calls) else None
        ident = (call.get("id") or call.get("call_id") or "") if isinstance(call, Mapping) else ""
        if ident:
            open_ids.setdefault(at, {}).setdefault(str(ident), []).append(position)
    out: dict[int, Match] = {}
    n = len(messages)
    index = 0
    while index < n:
        if messages[index].get("role") != "tool":
            index += 1
            continue
        end = index  # the run of tool messages [index, end) and the message after it
        while end < n and messages[end].get("role") == "tool":
            end += 1
        waiting = open_ids.get(end) if end < n and messages[end].get("role") == "assistant" else None
        if waiting:
            for k in range(index, end):
                if k in answers:
                    continue
                ident = messages[k].get("tool_call_id")
                positions = waiting.get(ident if type(ident) is str else str(ident or ""))
                if positions:
                    out[k] = (end, positions.pop(0))
        index = end
    return out


def answered_in_order(messages: Sequence[Mapping[str, Any]], index: int) -> bool:
    """Whether the calls of the assistant message at ``index`` are answered in their usual
    form: one result per call right after it, in the calls' order, each naming its call's
    (non-empty string) id. Then the result of call ``p`` is ``messages[index + 1 + p]``, as
    ``match_results`` says whatever the rest of the list holds: this message's calls are the
    nearest of their ids, and equal ids are answered first-come. A walk that reads calls with
    their results pairs such a block without a pass over the whole list (tested against it).
    """
    calls = messages[index].get("tool_calls")
    if type(calls) is not list or not calls or index + len(calls) >= len(messages):
        return False
    j = index + 1
    for call in calls:
        ident = (call.get("id") or call.get("call_id")) if type(call) is dict else None
        if type(ident) is not str or not ident:
            return False
        answer = messages[j]
        if answer.get("role") != "tool" or answer.get("tool_call_id") != ident:
            return False
        j += 1
    return True


def pending_calls(messages: Sequence[Mapping[str, Any]]) -> list[Match]:
    """Calls of the newest assistant message that are still in flight (legal, never removed).

    Only when nothing but tool results follows that assistant message.
    """
    index = len(messages) - 1
    while index >= 0 and messages[index].get("role") == "tool":
        index -= 1
    if index < 0 or messages[index].get("role") != "assistant" or not messages[index].get("tool_calls"):
        return []
    answered = {
        match[1] for i, match in match_results(messages[index:])[0].items()
    }
    return [(index, p) for p in range(len(call_ids_of(messages[index]))) if p not in answered]


def pairing_problems(messages: Sequence[Mapping[str, Any]], *, allow_pending: bool = True) -> list[str]:
    """Why ``messages`` would be refused by a provider (``[]`` when valid), each naming indices.

    ``allow_pending`` accepts unanswered calls of the newest assistant message (in flight: docs/message-model.md).
    """
    problems: list[str] = []
    n = len(messages)
    index = 0
    while index < n:
        message = messages[index]
        role = message.get("role")
        if role == "tool":
            problems.append(
                f"message {index}: tool result {message.get('tool_call_id')!r} follows no "
                "assistant call it could answer"
            )
            index += 1
            continue
        if role != "assistant":
            index += 1
            continue
        calls = message.get("tool_calls")
        if not calls:
            index += 1
            continue
        end = index + 1 + len(calls) if type(calls) is list else -1
        if 0 < end <= n and (end == n or messages[end].get("role") != "tool"):
            # Nearly every block: one result per call, in the calls' order, each with its
            # call's (non-empty, string) id, then another message: valid, with no list of ids.
            j = index + 1
            for call in calls:
                ident = (call.get("id") or call.get("call_id")) if type(call) is dict else None
                if type(ident) is not str or not ident:
                    break
                answer = messages[j]
                if answer.get("role") != "tool" or answer.get("tool_call_id") != ident:
                    break
                j += 1
            else:
                index = end
                continue
        ids = call_ids_of(message)
        if any(not ident for ident in ids):
            problems.append(f"message {index}: a tool call without an id")
        open_positions: dict[str, list[int]] = {}
        for position, ident in enumerate(ids):
            open_positions.setdefault(ident, []).append(position)
        j = index + 1
        while j < n and messages[j].get("role") == "tool":
            ident = str(messages[j].get("tool_call_id") or "")
            positions = open_positions.get(ident)
            if positions:
                positions.pop(0)
            else:
                problems.append(
                    f"message {j}: tool result {ident!r} answers no open call of the assistant "
                    f"message {index}"
                )
            j += 1
        missing = [ident for ident, positions in open_positions.items() for _ in positions]
        if missing and not (allow_pending and j >= n):
            problems.append(
                f"message {index}: tool call(s) {', '.join(repr(m) for m in missing)} have no "
                "result before the next message"
            )
        index = j
    return problems


def is_valid_pairing(messages: Sequence[Mapping[str, Any]], *, allow_pending: bool = True) -> bool:
    """Whether a provider would accept the pairing of ``messages`` (see ``pairing_problems``)."""
    return not pairing_problems(messages, allow_pending=allow_pending)


# --- repair ------------------------------------------------------------------------------------

#: What an assistant message says when every call it made was removed and it had no text.
TOOL_CALL_REMOVED = "(tool call removed)"


@attrs.frozen(kw_only=True)
class PairingRepair:
    """What ``repair_pairing`` did: results moved back after their call, results dropped
    (orphans, second answers, ambiguous separated ones), calls dropped (not answered right after
    them). Said as what was checked - where a result or call is not - never as a claim that a
    call was never made or no result came: the call may have been compacted away, the result
    may come in a later message."""

    moved: int = 0
    dropped_results: int = 0
    dropped_calls: int = 0

    @property
    def changed(self) -> int:
        return self.moved + self.dropped_results + self.dropped_calls

    def describe(self) -> str:
        parts = []
        if self.moved:
            parts.append(f"{self.moved} tool result(s) moved back after their call")
        if self.dropped_results:
            parts.append(f"{self.dropped_results} tool result(s) dropped (no call they answer is "
                         "before them in these messages)")
        if self.dropped_calls:
            parts.append(f"{self.dropped_calls} tool call(s) dropped (their results do not follow "
                         "them in these messages)")
        return "; ".join(parts) or "nothing"


def _with_note(message: Mapping[str, Any], note: str) -> dict[str, Any]:
    """``message`` with ``note`` added to its text (a text part for a parts list)."""
    out = dict(message)
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [*content, {"type": "text", "text": note}]
    elif isinstance(content, str) and content.strip():
        out["content"] = f"{content}\n{note}"
    else:
        out["content"] = note
    out.pop("api_content", None)
    return out


def _calls_note(count: int) -> str:
    return "(1 tool call removed: no result follows it)" if count == 1 else (
        f"({count} tool calls removed: no results follow them)"
    )


def _results_note(count: int) -> str:
    return "(1 tool result removed: no call before it)" if count == 1 else (
        f"({count} tool results removed: no calls before them)"
    )


def repair_pairing(
    messages: list[dict[str, Any]], *, allow_pending: bool = True
) -> tuple[list[dict[str, Any]], PairingRepair]:
    """``messages`` made valid by the provider rule; ``(list, what was done)``.

    Nothing is invented: a result separated from its call by other messages is moved back
    right after that call when the match is unambiguous (no other open call carries its id),
    otherwise dropped; a result recorded just before its call is moved after it
    (``early_answers``); orphan results and second answers are dropped; calls no kept result
    answers are dropped, except the newest assistant message's pending calls when
    ``allow_pending``. Every drop leaves a counted note in the nearest assistant message
    (``(tool call removed)`` when nothing else is left of it). A valid list comes back as the
    very same object, and the input and its dicts are never mutated.
    """
    if not pairing_problems(messages, allow_pending=allow_pending):
        return messages, PairingRepair()
    results_of, answered, dropped_at, moved = _assign_results(messages)
    pending_at = -1
    if allow_pending:
        j = len(messages) - 1
        while j >= 0 and messages[j].get("role") == "tool":
            j -= 1
        if j >= 0 and messages[j].get("role") == "assistant":
            pending_at = j
    out, dropped_calls = _rebuilt(messages, results_of, answered, dropped_at, pending_at)
    report = PairingRepair(moved=moved, dropped_results=len(dropped_at), dropped_calls=dropped_calls)
    return out, report


def _assign_results(
    messages: list[dict[str, Any]],
) -> tuple[dict[int, list[int]], set[Match], list[int], int]:
    """Which call each tool result answers: ``(assistant index -> kept result indices in order,
    the answered calls, the indices of dropped results, how many results move)``."""
    open_calls: dict[str, list[Match]] = {}
    results_of: dict[int, list[int]] = {}
    answered: set[Match] = set()
    dropped_at: list[int] = []
    moved = 0
    last_non_tool = -1
    early = early_answers(messages, *match_results(messages))
    early_calls = set(early.values())
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != "tool":
            last_non_tool = index
            if role == "assistant" and message.get("tool_calls"):
                for position, ident in enumerate(call_ids_of(message)):
                    if ident and (index, position) not in early_calls:
                        open_calls.setdefault(ident, []).append((index, position))
            continue
        if index in early:  # recorded just before its call: moved after it
            match = early[index]
            moved += 1
            answered.add(match)
            results_of.setdefault(match[0], []).append(index)
            continue
        ident = str(message.get("tool_call_id") or "")
        stack = open_calls.get(ident) if ident else None
        if not stack:
            dropped_at.append(index)
            continue
        newest = stack[-1][0]
        k = len(stack) - 1
        while k > 0 and stack[k - 1][0] == newest:
            k -= 1
        match = stack[k]
        if match[0] != last_non_tool:
            # Separated from its call: move it back only when no other open call has its id.
            if len(stack) != 1:
                dropped_at.append(index)
                continue
            moved += 1
        stack.pop(k)
        answered.add(match)
        results_of.setdefault(match[0], []).append(index)
    return results_of, answered, dropped_at, moved


def _rebuilt(
    messages: list[dict[str, Any]], results_of: dict[int, list[int]], answered: set[Match],
    dropped_at: list[int], pending_at: int,
) -> tuple[list[dict[str, Any]], int]:
    """The repaired list (each kept result right after its call, drops noted in the nearest
    assistant message) and how many calls were dropped."""
    n = len(messages)
    out: list[dict[str, Any]] = []
    last_assistant = -1  # index in ``out`` of the newest assistant message written
    waiting_notes = 0  # dropped results before any assistant message
    dropped_calls = 0
    drops = iter(dropped_at)
    next_drop = next(drops, n)
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if index == next_drop:
                next_drop = next(drops, n)
                if last_assistant >= 0:
                    out[last_assistant] = _add_dropped(out[last_assistant])
                else:
                    waiting_notes += 1
            continue
        if role != "assistant":
            out.append(message)
            continue
        current, removed = _unanswered_removed(message, index, answered, pending_at)
        dropped_calls += removed
        for _ in range(waiting_notes):
            current = _add_dropped(current)
        waiting_notes = 0
        out.append(current)
        last_assistant = len(out) - 1
        for r in results_of.get(index, ()):
            out.append(messages[r])
    return out, dropped_calls


def _unanswered_removed(
    message: dict[str, Any], index: int, answered: set[Match], pending_at: int
) -> tuple[dict[str, Any], int]:
    """An assistant message without its calls no kept result answers (pending ones kept at
    ``pending_at``), with a note of how many went; ``(message, removed)``."""
    if not message.get("tool_calls"):
        return message, 0
    calls = message["tool_calls"]
    ids = call_ids_of(message)
    keep = [
        call for position, (call, ident) in enumerate(zip(calls, ids, strict=True))
        if ident and ((index, position) in answered or index == pending_at)
    ]
    if len(keep) == len(calls):
        return message, 0
    removed = len(calls) - len(keep)
    fixed = {k: v for k, v in message.items() if k not in ("tool_calls", "api_content")}
    if keep:
        fixed["tool_calls"] = keep
        fixed = _with_note(fixed, _calls_note(removed))
    elif _blank(fixed.get("content")):
        fixed["content"] = TOOL_CALL_REMOVED if removed == 1 else _calls_note(removed)
    else:
        fixed = _with_note(fixed, _calls_note(removed))
    return fixed, removed


def _blank(content: Any) -> bool:
    return content is None or content == [] or (isinstance(content, str) and not content.strip())


_DROPPED_KEY = "_dropped_results"


def _add_dropped(message: Mapping[str, Any]) -> dict[str, Any]:
    """One more dropped result noted on an assistant message (one note, its count updated)."""
    count = int(message.get(_DROPPED_KEY) or 0)
    out = dict(message)
    if count:
        old = _results_note(count)
        content = out.get("content")
        if isinstance(content, str) and content.endswith(old):
            out["content"] = content[: len(content) - len(old)].rstrip("\n")
            if not out["content"]:
                out["content"] = None
        elif isinstance(content, list) and content and isinstance(content[-1], Mapping) \
                and content[-1].get("text") == old:
            out["content"] = content[:-1]
    out = _with_note(out, _results_note(count + 1))
    out[_DROPPED_KEY] = count + 1
    return out


class PairingGuard:
    """The pairing check of one session's requests, incremental so a turn costs O(new messages).

    ``check(messages, where=...)`` returns ``messages`` itself when it is valid, else a repaired
    copy (``repair_pairing``) with a ``tool_pairs_repaired`` warning for the host. It remembers
    the validated list by its length and the identity of its last message: when the next list
    extends it (the host appended the turn), only the new suffix is checked, from the start of
    the last message group (whose calls may have been pending). A host that keeps sending the
    same broken prefix is warned once; later repairs of it are logged, unless they do more than
    the one warned of (a result that came late and has to go too is said).
    """

    def __init__(self) -> None:
        self._length = 0
        self._last: Any = None
        self._group = 0
        self._bad: tuple[int, Any] | None = None
        self._bad_said = ""  # what the last warning said was repaired

    def _remember(self, messages: Sequence[Mapping[str, Any]]) -> None:
        n = len(messages)
        self._length = n
        self._last = messages[-1] if n else None
        group = n - 1
        while group > 0 and messages[group].get("role") == "tool":
            group -= 1
        self._group = max(group, 0)

    def _extends(self, messages: Sequence[Mapping[str, Any]], length: int, last: Any) -> bool:
        return 0 < length <= len(messages) and messages[length - 1] is last

    def check(self, messages: list[dict[str, Any]], *, where: str = "request") -> list[dict[str, Any]]:
        n = len(messages)
        if self._extends(messages, self._length, self._last):
            if n == self._length:
                return messages
            problems = pairing_problems(messages[self._group:])
        else:
            problems = pairing_problems(messages)
        if not problems:
            self._remember(messages)
            return messages
        repaired, report = repair_pairing(messages)
        said = report.describe()
        known = self._bad is not None and self._extends(messages, *self._bad) and said == self._bad_said
        self._bad = (n, messages[-1]) if n else None
        self._bad_said = said
        if known:
            log.info("tool_pairs_repaired", where=where, repairs=report.changed, repeated=True)
        else:
            record_warning(
                "tool_pairs_repaired",
                f"the messages passed to {where} break the tool-call pairing rule "
                f"({problems[0]}); repaired before sending: {report.describe()}",
                where=where,
                repairs=report.changed,
            )
        # Not remembered: the repair may end with the very message the broken input ends
        # with, and that input must never pass as validated. The next list is checked whole.
        self._length, self._last = 0, None
        return repaired

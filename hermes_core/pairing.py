"""The tool-call pairing rule, the one place it is written down.

Providers reject a request whose tool calls and results do not line up, and providers reuse
call ids (gpt-4o in tau-bench, SWE-agent 1.x), so pairing by id alone is wrong. The rule here:

* **Matching**: a tool result answers the nearest preceding assistant call with its id that is
  still unanswered (by position; within one assistant message, the first such call).
* **Validity** (what OpenAI and Anthropic enforce): the results of an assistant message's calls
  come right after it, one per call, before any other message; a tool message answers a call of
  the assistant message its block follows. Calls of the newest assistant message may be
  unanswered when nothing but their results follows it: those calls are in flight (the host
  runs them next) and are legal.

Everything that pairs messages (dedupe, demotion, the cut, ``sanitize_tool_pairs``, one-liners,
readers, the request loop) goes through ``match_results``; every check of an output goes through
``pairing_problems``. Plain functions over dicts: they run over whole histories.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "Match",
    "call_ids_of",
    "is_valid_pairing",
    "match_results",
    "pairing_problems",
    "pending_calls",
]

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
    # id -> open calls with that id, oldest first; the nearest is at the end (same message:
    # the run of entries with the newest assistant index, of which the first is taken).
    open_calls: dict[str, list[Match]] = {}
    answers: dict[int, Match] = {}
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "assistant":
            if message.get("tool_calls"):
                for position, ident in enumerate(call_ids_of(message)):
                    open_calls.setdefault(ident, []).append((index, position))
        elif role == "tool":
            ident = str(message.get("tool_call_id") or "")
            stack = open_calls.get(ident)
            if not stack:
                continue
            newest = stack[-1][0]
            k = len(stack) - 1
            while k > 0 and stack[k - 1][0] == newest:
                k -= 1
            answers[index] = stack.pop(k)
    unanswered = sorted(match for stack in open_calls.values() for match in stack)
    return answers, unanswered


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

    ``allow_pending`` accepts unanswered calls of the newest assistant message (see module doc).
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
        if role != "assistant" or not message.get("tool_calls"):
            index += 1
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

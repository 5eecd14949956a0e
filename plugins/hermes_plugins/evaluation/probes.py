"""Probes: the facts a continuing agent needs, taken from the messages a compaction condensed.

Each probe is a short exact string (its ``key``) with a category. Categories, most important
first: ``requests`` (the first 80 characters of each user request), ``errors`` (the first error
line of each failed tool result, or failed observation of a text agent, ≤ 80 chars),
``files_modified`` (paths a write/edit/patch call named, or Aider's "Applied edit to"),
``failed_commands`` (the command of each failed shell call, ≤ 60 chars), ``decisions``
(sentences of the user's that state a rule or a choice) and ``identifiers`` (ids, numbers, paths
and URLs the user typed). Whitespace inside keys is collapsed to single spaces; the context is
searched the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_plugins._common.failures import failure_of
from hermes_core import bounded
from hermes_core.messages import content_text
from hermes_plugins._common.injected import applied_edits, is_observation, is_request
from hermes_core.pairing import match_results
from hermes_plugins._common.toolkinds import command_of, file_actions, is_read_tool, is_shell_tool

CATEGORIES = ("requests", "errors", "files_modified", "failed_commands", "decisions", "identifiers")
REQUEST_KEY = 80
ERROR_KEY = 80
COMMAND_KEY = 60

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
#: A user sentence that states a rule or a choice (the user's own words, never tool output).
_DECISION = re.compile(
    r"\b(?:don't|do not|never|always|must(?:n't| not)?|instead of|rather than|prefer|make sure|"
    r"only use|use \S+ instead|let's go with|we'll use|go with|switch to|keep using)\b",
    re.IGNORECASE,
)
_IDENTIFIER = re.compile(
    r"https?://[^\s)>\"'`]+"                                      # URLs
    r"|(?<![\w/.\-])(?:~?/|\./)?(?:[\w.\-]+/)+[\w.\-]+"            # paths with a slash
    r"|(?<![\w\-])(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_\-]{4,}(?![\w\-])"  # ids
    r"|(?<![\w.])\d{3,}(?:\.\d+)?(?![\w.])"                       # numbers of 3+ digits
)


@attrs.frozen(kw_only=True)
class Probe:
    """One fact to look for: its category, exact key, and the input message it came from."""

    category: str
    key: str
    index: int


def one_line(text: str) -> str:
    return " ".join(text.split())


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rstrip()


def _arguments(call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:

    fn = call.get("function")
    fn = fn if isinstance(fn, Mapping) else {}
    raw = fn.get("arguments")
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = bounded.loads(raw) if raw.strip() else {}
        except ValueError:  # invalid, or too deep to parse (bounded.TooDeepError)
            args = {}
    return str(fn.get("name") or ""), args if isinstance(args, dict) else {}


def derive_probes(messages: Sequence[Mapping[str, Any]], condensed: set[int]) -> list[Probe]:
    """The probes of the messages at the indices in ``condensed``, deduplicated per category."""
    answers, _unanswered = match_results(messages)
    probes: list[Probe] = []
    seen: set[tuple[str, str]] = set()

    def add(category: str, key: str, index: int) -> None:
        key = one_line(key)
        if len(key) >= 3 and (category, key) not in seen:
            seen.add((category, key))
            probes.append(Probe(category=category, key=key, index=index))

    for index in sorted(condensed):
        message = messages[index]
        role = message.get("role")
        if role == "user" and is_request(message):
            text = content_text(message.get("content"))
            add("requests", _clip(one_line(text), REQUEST_KEY), index)
            for sentence in _SENTENCE.split(text):
                if 8 <= len(sentence.strip()) and _DECISION.search(sentence):
                    add("decisions", _clip(one_line(sentence), REQUEST_KEY), index)
            for match in _IDENTIFIER.finditer(text):
                add("identifiers", match.group(0).rstrip(".,;:"), index)
        elif is_observation(message):
            # A text agent's observation: its failure is a failed result's (no call names a file).
            text = content_text(message.get("content"))
            failure = failure_of(text, is_error=message.get("_is_error")
                                 or message.get("_injected") == "error-observation")
            if failure is not None and failure.first:
                add("errors", _clip(failure.first, ERROR_KEY), index)
            for path in applied_edits(text):
                add("files_modified", path, index)
        elif role == "assistant":
            for call in message.get("tool_calls") or ():
                if isinstance(call, Mapping):
                    name, args = _arguments(call)
                    for path, verb in file_actions(name, args):
                        if verb != "read":
                            add("files_modified", path, index)
        elif role == "tool" and index in answers:
            at, position = answers[index]
            calls = messages[at].get("tool_calls") or []
            name, args = _arguments(calls[position]) if position < len(calls) else ("", {})
            content = content_text(message.get("content"))
            if not file_actions(name, args):  # SWE-agent's edit names its file in the result only
                for path, verb in file_actions(name, args, content):
                    if verb != "read":
                        add("files_modified", path, index)
            failure = failure_of(content, is_error=message.get("_is_error"), reads=is_read_tool(name, args))
            if failure is None:
                continue
            if failure.first:
                add("errors", _clip(failure.first, ERROR_KEY), index)
            if is_shell_tool(name):
                command = command_of(args)
                if command:
                    add("failed_commands", _clip(one_line(command), COMMAND_KEY), index)
    return probes

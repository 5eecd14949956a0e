"""Probes: the facts a continuing agent needs, taken from the messages a compaction condensed.

Each probe is a short exact string (its ``key``) with a category. Categories, most important
first: ``requests`` (the first 80 characters of each user request), ``errors`` (the first error
line of each failed tool result, or failed observation of a text agent, ≤ 80 chars),
``files_modified`` (paths a write/edit/patch call named, or Aider's "Applied edit to"),
``failed_commands`` (the command of each failed shell call, ≤ 60 chars), ``decisions``
(sentences of the user's that state a rule or a choice) and ``identifiers`` (ids, numbers, paths
and URLs the user typed). Whitespace inside keys is collapsed to single spaces; the context is
searched the same way.

Requests, decisions and identifiers come only from what the person typed, by the rule the
summary uses (``_common.injected.requests_of``: not marked ``_injected`` by a reader, not a
summary, harness blocks cut out, hand-offs and Aider commands left out) and not a tool's output
pasted into the user role (``evidence.pasted_tool_output``); files from every route the summary
reads (``_common.textedits.message_edits``: tool calls, edits written in text, shell writes);
an error needs evidence
(``evidence.failure_line``: a flag, an exit or return code, a traceback, an error line, ``command
not found``), on tool results and on output in the user role (marked observations, pasted tool
output). Every key is taken from the **redacted** text of its message (``hermes_core.redaction``,
each text redacted once): a secret the compaction masks is a kept item, and no key holds one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from hermes_core.plugin import bounded, content_text, match_results, redact
from hermes_plugins._common.injected import is_observation, pasted_result, requests_of
from hermes_plugins._common.textedits import message_edits
from hermes_plugins._common.toolkinds import command_of, file_actions, is_read_tool, is_shell_tool
from hermes_plugins.evaluation.evidence import failure_line, pasted_tool_output

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


def derive_probes(
    messages: Sequence[Mapping[str, Any]], condensed: set[int], *, redacted: dict[str, str] | None = None
) -> list[Probe]:
    """The probes of the messages at the indices in ``condensed``, deduplicated per category.

    ``redacted`` (text -> redacted text) receives the user texts redacted here, for the
    recall check to reuse."""
    found = _Probes(messages, {} if redacted is None else redacted)
    for index in sorted(condensed):
        message = messages[index]
        role = message.get("role")
        words = found.requests.get(index) if role == "user" else None
        raw = content_text(message.get("content")) if words is not None else ""
        if words is not None and (words != raw or pasted_tool_output(raw) is None):
            found.user_words(words, index)
        elif role == "user" and (is_observation(message)
                                 or pasted_tool_output(content_text(message.get("content")))):
            found.user_output(message, index)
        elif role == "assistant":
            # Tool calls, edits written in the text (Aider, Cline/Roo XML, apply_patch) and shell
            # writes: the routes the summary's "Files" section reads (``message_edits``).
            for path, _verb, _how in message_edits(message):
                found.add("files_modified", path, index)
        elif role == "tool" and index in found.answers:
            found.tool_result(message, index)
    return found.probes


class _Probes:
    """The probes found so far in one list of messages, and what finding them reuses."""

    def __init__(self, messages: Sequence[Mapping[str, Any]], redacted: dict[str, str]) -> None:
        self.messages = messages
        self.redacted = redacted
        self.answers = match_results(messages)[0]
        # The person's words per user turn, by the rule the summary uses (hermes_plugins._common.
        # injected: harness blocks cut out, hand-offs and Aider commands left out).
        self.requests = requests_of(messages)
        self.probes: list[Probe] = []
        self._seen: set[tuple[str, str]] = set()
        self._parsed: dict[int, tuple[str, dict[str, Any]]] = {}

    def add(self, category: str, key: str, index: int) -> None:
        # Keys come from redacted text; redacting the key again is the net for a clipped one.
        key = one_line(redact(key))
        if len(key) >= 3 and (category, key) not in self._seen:
            self._seen.add((category, key))
            self.probes.append(Probe(category=category, key=key, index=index))

    def _arguments(self, call: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        found = self._parsed.get(id(call))
        if found is None:
            found = self._parsed[id(call)] = _arguments(call)
        return found

    def user_words(self, words: str, index: int) -> None:
        """What the person typed: the request, the decisions and identifiers in it."""
        text = self.redacted[words] = redact(words)
        self.add("requests", _clip(one_line(text), REQUEST_KEY), index)
        for sentence in _SENTENCE.split(text):
            if 8 <= len(sentence.strip()) and _DECISION.search(sentence):
                self.add("decisions", _clip(one_line(sentence), REQUEST_KEY), index)
        for match in _IDENTIFIER.finditer(text):
            self.add("identifiers", match.group(0).rstrip(".,;:"), index)

    def user_output(self, message: Mapping[str, Any], index: int) -> None:
        """Output in the user role (a text agent's observation, Cline's results): its failure
        is a failed result's (no call names a file)."""
        text = content_text(message.get("content"))
        pasted = pasted_result(text)
        # A pasted result is judged on its output alone, and a read tool's text is no evidence.
        line = failure_line(pasted[2], reads=is_read_tool(pasted[0], {})) if pasted else failure_line(
            text, is_error=message.get("_is_error") or message.get("_injected") == "error-observation")
        if line:
            self.add("errors", _clip(line, ERROR_KEY), index)
        for path, _verb, _how in message_edits(message):
            self.add("files_modified", path, index)

    def tool_result(self, message: Mapping[str, Any], index: int) -> None:
        """A tool result, read with the call it answers: files it wrote, its failure."""
        at, position = self.answers[index]
        calls = self.messages[at].get("tool_calls") or []
        name, args = self._arguments(calls[position]) if position < len(calls) else ("", {})
        content = content_text(message.get("content"))
        if not file_actions(name, args):  # SWE-agent's edit names its file in the result only
            for path, verb in file_actions(name, args, content):
                if verb != "read":
                    self.add("files_modified", path, index)
        line = failure_line(content, is_error=message.get("_is_error"), reads=is_read_tool(name, args))
        if line is None:
            return
        self.add("errors", _clip(line, ERROR_KEY), index)
        if is_shell_tool(name):
            command = command_of(args)
            if command:
                self.add("failed_commands", _clip(one_line(redact(command)), COMMAND_KEY), index)

"""The offline summariser: a grounded, structured handoff built from the turns' structure.

No model is involved, and no section is filled by a keyword found somewhere in a text. Each
comes from what the turns are:

* **Latest user request** (verbatim) and **User requests** (every request in order, ≤ 200
  chars each): user turns that are requests - not text an agent injected (``_injected``,
  ``<system-reminder>``, ``<task-notification>``) and not an earlier summary (``_summary``,
  Claude Code's continuation, Codex's handoff, Hermes Agent's compaction prefix).
* **Errors**: failed tool results only (``hermes_plugins._common.failures``: ``_is_error``, exit codes,
  JSON errors, tracebacks), each with its error line and whether a later call of the same command
  or on the same file succeeded (``resolved``) or not (``still failing``).
* **Files**: paths named by write / edit / patch calls (created, modified, with tool and count)
  and by read calls (``hermes_plugins._common.toolkinds``).
* **Commands**: failed shell commands with exit code and error line; successful ones collapsed.
* **Decisions and constraints**: sentences of the user's requests that state a rule or a choice.
* **Open items** (the newest todo list's unfinished items, questions the assistant asked last),
  **Last step before the cut**, **Completed actions** (the §7.2 one-liners, numbered).

Anchored and iterative: a previous summary - ours, or another agent's recognised by metadata or
its opening - is parsed into the same sections (another agent's headings are mapped by their
titles) and every section is merged with the new facts: items deduplicated, the oldest trimmed
first. The whole stays within 8,000 characters; what gets room first is the latest request,
errors still failing, files modified, user decisions, then the rest. A trimmed section says how
many items it left out. Identifiers are copied exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from hermes_core.plugin import Config, SummaryRequest, answered_in_order, match_results, redact
from hermes_plugins._common.failures import (
    CACHE_MIN_CHARS,
    Failure,
    compose_error,
    error_lines,
    failure_of,
    is_no_result,
    line_verdict,
    location,
    memo_entry,
)
from hermes_plugins._common.injected import (
    INJECTED_OPENINGS,
    SUMMARY_OPENINGS,
    applied_edits,
    is_handoff,
    is_observation,
    pasted_result,
    react_block,
    react_command,
    request_text,
    summary_author,
)
from hermes_plugins._common.textedits import shell_writes, text_edits
from hermes_plugins._common.toolkinds import (
    EDIT_TOOLS,
    EDITOR_TOOLS,
    PATCH_TOOLS,
    READ_TOOLS,
    SHELL_TOOLS,
    WRITE_TOOLS,
    command_of,
    file_actions,
    is_read_tool,
)
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR, split_summary_text
from hermes_plugins.compressor.oneliners import (
    line_with_verdict,
    looks_demoted,
    no_result_line,
    parse_arguments,
    plain_line_arguments,
    plain_line_name,
    summarize_tool_result,
)
from hermes_plugins.compressor.plan import TurnDemotions
from hermes_plugins.compressor.prompt import NO_USER_SENTINEL
from hermes_plugins.compressor.prune import DUPLICATE_OF_CALL, DUPLICATE_PREFIX
from hermes_plugins.compressor.serialize import TURN_HARD_MAX, message_text

MAX_CHARS = 8_000
REQUEST_MAX = 2_500
REQUEST_ITEM_MAX = 200
ITEM_MAX = 400
FOCUS_SHARE = 0.65
RECENT_TEXT_MAX = 600

LATEST = "Latest user request"
REQUESTS = "User requests"
ERRORS = "Errors"
FILES = "Files"
COMMANDS = "Commands"
DECISIONS = "Decisions and constraints"
OPEN = "Open items"
LAST_STEP = "Last step before the cut"
EARLIER = "Earlier summary"
ACTIONS = "Completed actions"
FOCUS_PREFIX = "Focus: "
#: Display order of the list sections.
ORDER = (REQUESTS, ERRORS, FILES, COMMANDS, DECISIONS, OPEN, LAST_STEP, EARLIER, ACTIONS)
_KNOWN = {LATEST, *ORDER}
#: Older titles of ours (and the LLM prompt's), read into today's sections.
_ALIASES = {
    "Goal": EARLIER, "Errors and blockers": ERRORS, "Files touched": FILES, "Decisions": DECISIONS,
    "Open questions (may be stale)": OPEN, "Last turns before the cut": LAST_STEP,
    "Constraints and preferences": DECISIONS, "Remaining work (may be stale)": OPEN,
    "In progress (may be stale)": OPEN, "Current state": EARLIER, "Critical context": EARLIER,
    "Resolved questions": EARLIER,
}
STILL_FAILING = "still failing"
RESOLVED = "resolved"
_STATUS = re.compile(r" — (still failing|resolved)$")
_FILE_ITEM = re.compile(r"^(.+?) — (created|modified|deleted|read) \((.*)\)$")
_COUNT = re.compile(r"^(.+?) ×(\d+)$")

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
#: A sentence of the user's that states a rule or a choice (only ever applied to requests): an
#: imperative opening, or a phrase of choosing anywhere in it.
_DECISION = re.compile(
    r"^(?:(?:please|and|but|also|so|yes|ok|okay|no|then|now),?\s+)*(?:don't|do not|never|always|make sure|avoid|only|"
    r"keep|use|let's|let us|we'll|stick with|switch to|go with)\b"
    r"|\b(?:must(?:n't| not)?|instead of|rather than|I prefer|we prefer|go with|should(?:n't| not)|"
    r"from now on)\b",
    re.IGNORECASE,
)
#: Lower-case words one of ``_DECISION``'s forms needs: a request holding none of them states
#: no decision, and is not split into sentences at all.
_DECISION_WORDS = (
    "don't", "do not", "never", "always", "make sure", "avoid", "only", "keep", "use", "let's",
    "let us", "we'll", "stick with", "switch to", "go with", "must", "instead of", "rather than",
    "prefer", "should", "from now on",
)


def _may_decide(text: str) -> bool:
    lowered = text.lower()
    for word in _DECISION_WORDS:  # a plain loop: ``any`` over a generator cost 3x (per request)
        if word in lowered:
            return True
    return False


#: Cline/Roo tools whose pasted output is someone else's text (a file, a listing, search hits).
_PASTED_READS = frozenset({"read_file", "list_files", "search_files", "list_code_definition_names",
                           "access_mcp_resource", "browser_action", "fetch_instructions"})
#: Cline/Roo's report of a tool that failed: "The tool execution failed ...:\n<error>\n...\n</error>".
_PASTED_ERROR = re.compile(r"<error>\s*(.*?)\s*(?:</error>|\Z)", re.DOTALL)

_STOPWORDS = frozenset({"the", "and", "for", "with", "about", "that", "this", "from", "into", "what"})
_EXIT_IN_LINE = re.compile(r" -> exit (-?\d+|\?)")


def _one_line(text: str) -> bool:
    """Whether collapsing ``text``'s whitespace would change nothing: every whitespace but the
    ASCII space is not printable, so a printable text without double, leading or trailing
    spaces is its own collapse."""
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def _clip(text: str, limit: int, redacting: Callable[[str], str] | None = None) -> str:
    """``text`` on one line, cut at a word boundary within ``limit`` (identifiers never split).

    A text that has to change is redacted first: joining lines hides a ``name: value`` line
    from the line-start pattern and a cut can leave too little of a key to recognise it. A
    text that stays as it is gets redacted with the rendered summary (``build_handoff``).
    ``redacting``: the walk's memo of ``redact`` (``_Facts.clip``), else ``redact``.
    """
    if len(text) <= limit and text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text  # already one clean line (``_one_line``, inline: most texts end here)
    text = redact(text) if redacting is None else redacting(text)
    if not _one_line(text):
        # Collapsing the whitespace of a prefix gives a prefix of the whole's collapse: once
        # that is longer than the limit, the rest of a long text (a pasted log) cannot change
        # the cut, and is not split into words at all.
        collapsed = " ".join(text[: 4 * limit].split()) if len(text) > 4 * limit else ""
        text = collapsed if len(collapsed) > limit else " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "…"


def verbatim(text: str, limit: int) -> str:
    """A user's words as they were, or head and tail around an omission note when too long
    (redact ``text`` first: a cut can leave too little of a key to recognise it)."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    head = text[: int(limit * 0.7)]
    tail = text[-int(limit * 0.25):]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} characters omitted …]\n{tail}"


#: Tools whose arguments say something the facts use (a command, a path, todos, a question);
#: the arguments of every other call are parsed only if its one-liner is shown.
_TODO_TOOLS = frozenset({"TodoWrite", "todo", "todo_write"})
_ARGUMENT_TOOLS = (SHELL_TOOLS | READ_TOOLS | WRITE_TOOLS | EDIT_TOOLS | PATCH_TOOLS | EDITOR_TOOLS
                   | _TODO_TOOLS | {"clarify"})
_NO_ARGS: dict[str, Any] = {}


#: First characters of every opening ``request_text`` looks for (``_common.injected``): the
#: agents' openings, pasted results and harness notes ("[", "<") and chat commands ("/").
_OPENING_STARTS = frozenset(opening[0] for opening, _kind in (*SUMMARY_OPENINGS, *INJECTED_OPENINGS)) | {"[", "<", "/"}
_KIND_KEYS = ("_summary", "_compressed_summary", "_injected", "_demonstration")
_KIND_KEY_SET = frozenset(_KIND_KEYS)


def _plain_request(turn: Mapping[str, Any], text: str) -> bool:
    """Whether a user turn is certainly a typed request (``is_request``) without the openings
    scan: string content, none of the metadata that marks other text, and a first character no
    opening of an agent's text starts with, and no closing tag (a harness block inside it).
    ``False`` means "ask ``request_text``"; hand-offs are checked by the caller."""
    if type(turn.get("content")) is not str:
        return False
    if not _KIND_KEY_SET.isdisjoint(turn):  # most turns hold none of the keys: one C call
        for key in _KIND_KEYS:
            if turn.get(key):
                return False
    head = text.lstrip()[:1]
    return bool(head) and head not in _OPENING_STARTS and "</" not in text


def _failed(failure: Any) -> tuple[str | None, str] | None:
    """(exit code, error with its ``file:line``) of a ``failure_of`` verdict, or ``None``."""
    if failure is None:
        return None
    where = f" ({failure.where})" if failure.where and failure.where not in failure.error else ""
    # Read from the unredacted result: the error line is redacted on its own, while it still
    # starts a line (``password: ...`` is masked only there).
    return failure.code, redact(failure.error or "failed") + where


#: A completed action: its one-liner, or the number of a call whose one-liner is built only if
#: it is shown (``_Facts.line``; most never are: the section keeps the newest that fit). A number,
#: not a tuple: over 100k messages every object kept to the end of the walk is one more for the
#: garbage collector to traverse, and its collections were a third of the walk.
_Action = str | int

#: Tools whose one-liners carry no count ``looks_demoted`` knows: "[Write] wrote to ...".
_LINE_TOOLS = WRITE_TOOLS | EDIT_TOOLS | PATCH_TOOLS | EDITOR_TOOLS
#: Tools ``file_actions`` may find a path for (a shell only with a command list).
_FILE_TOOLS = EDITOR_TOOLS | PATCH_TOOLS | SHELL_TOOLS | READ_TOOLS | WRITE_TOOLS | EDIT_TOOLS

#: What a summary asks of a tool's name, decided once per name (``_kind_of``): a tuple, read by
#: the indices below (a call reads several, and tuple indexing is the cheapest read).
_Kind = tuple[bool, bool, bool, bool, bool, bool]
_ARGUMENT, _SHELL, _PLAIN, _LINE, _FILES, _SPECIAL = range(6)
_KINDS: dict[str, _Kind] = {}
#: Names remembered at most (a host's tools are a few dozen; any name is decided again).
KINDS_MAX = 4_096


def _kind_of(name: str) -> _Kind:
    kind = (
        name in _ARGUMENT_TOOLS,
        name in SHELL_TOOLS,
        name not in EDIT_TOOLS and plain_line_name(name),  # ``_quiet``: edits read their file from the line
        name in _LINE_TOOLS,
        name in _FILE_TOOLS,
        name in _TODO_TOOLS or name == "clarify",
    )
    if len(_KINDS) >= KINDS_MAX:
        _KINDS.clear()
    _KINDS[name] = kind
    return kind
def _names_itself(text: str, name: str) -> bool:
    """Whether ``text`` reads as one of our one-liners of tool ``name``: ``[name] ...``, one
    line under 800 characters."""
    return text[:1] == "[" and text.startswith(name, 1) and text.startswith("]", len(name) + 1) \
        and len(text) < 800 and "\n" not in text


#: ``_call``'s outcome of a duplicate marker (none of its own).
_DUPLICATE: Any = ("", "")


def _demoted_failure(line: str, named: Sequence[str] = ()) -> tuple[str | None, str] | None:
    """(exit code, error) of one of our failed one-liners, or ``None`` for a success line.

    Only for a line whose result is gone and whose verdict is not remembered (``line_verdict``):
    the error part starts at the first "; " outside the texts the call named (``named``: its
    command, paths), which may hold "; " themselves."""
    start = line.find("` -> exit ")
    at = line.find("; ", start if start != -1 else 0)
    if start == -1 and at != -1:
        spans = [(f, f + len(text)) for text in named if text and (f := line.find(text)) != -1]
        while at != -1 and any(a <= at < b for a, b in spans):
            at = line.find("; ", at + 1)
    if at == -1:
        return None
    found = _EXIT_IN_LINE.search(line)
    code = found.group(1) if found and found.group(1) not in ("?", "0") else None
    return code, redact(line[at + 2:])


def _named(arguments: Any) -> list[str]:
    """The texts a call's one-liner may quote from its arguments (top-level strings, whole and
    as the start a clipped one keeps)."""
    named: list[str] = []
    for value in parse_arguments(arguments).values():
        if isinstance(value, str) and value:
            named.append(value)
            named.append(value[:40])
    return named


class _Files:
    """path -> (verb, {tool: count}); "created" turns into "modified" once a file was known."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, dict[str, int]]] = {}

    def add(self, path: str, verb: str, tool: str, count: int = 1) -> None:
        path = path.strip()
        if not path or len(path) > 300:
            return
        old = self.entries.get(path)
        if old is None:
            self.entries[path] = (verb, {tool: count})
            return
        old_verb, tools = old
        tools[tool] = tools.get(tool, 0) + count
        if old_verb == "read" and verb != "read":
            new_verb = "modified" if verb == "created" else verb
        elif old_verb != "read" and verb in ("modified", "created") and old_verb != verb:
            new_verb = "modified"
        elif verb == "deleted":
            new_verb = verb
        else:
            new_verb = old_verb
        self.entries.pop(path)
        self.entries[path] = (new_verb, tools)  # newest activity last

    def items(self, changed: bool) -> list[str]:
        out = []
        for path, (verb, tools) in self.entries.items():
            if (verb != "read") == changed:
                counts = ", ".join(f"{tool} ×{n}" if n > 1 else tool for tool, n in tools.items())
                out.append(f"{path} — {verb} ({counts})")
        return out

    def merge_item(self, item: str) -> None:
        match = _FILE_ITEM.match(item)
        if match is None:
            path = item.split(" (", 1)[0].strip()
            self.add(path, "read" if "read" in item[len(path):] and "patch" not in item else "modified", "earlier")
            return
        path, verb, tools = match.groups()
        for part in tools.split(", "):
            counted = _COUNT.match(part)
            self.add(path, verb, counted.group(1) if counted else part, int(counted.group(2)) if counted else 1)


class _Reading(NamedTuple):
    """How ``_Facts._read`` read a call's result."""

    result: Mapping[str, Any] | None
    content: str
    is_error: Any
    #: Read as our own demoted line of this call: the action is that line.
    demoted: bool
    #: The content is a one-liner of this very tool ("[name] ...").
    own: bool
    #: A planned result read as a plain success without building its line (``_quiet``).
    quiet: bool
    #: (line, verdict) of a planned result read as its line (``_judged_line``).
    judged: tuple[str, Failure | None] | None


def _turn_text(turn: Mapping[str, Any], role: Any) -> str:
    """``message_text``, skipped for the usual plain string (it changes nothing there)."""
    text = turn.get("content")
    if type(text) is not str or "MEDIA:" in text or len(text) > TURN_HARD_MAX or (role == "assistant" and "<" in text):
        return message_text(turn)
    return text


class _Facts:
    """Everything the handoff lists, pulled from the turns' structure in one pass."""

    def __init__(self, turns: Sequence[Mapping[str, Any]], demotions: TurnDemotions | None = None) -> None:
        # Ordered dicts, not lists: a repeated request moves to its newest place, and over
        # thousands of requests a list's membership test made the pass quadratic.
        self._requests: dict[str, None] = {}
        self._decisions: dict[str, None] = {}
        self.errors: list[tuple[str, str]] = []  # (key, text without status)
        self.error_keys_failing: dict[str, int] = {}
        self.resolved: set[str] = set()
        self.succeeded: set[str] = set()
        self.failed_commands: list[str] = []
        self.succeeded_commands: dict[str, int] = {}
        self.files = _Files()
        self.actions: list[_Action] = []  # see ``line``
        self._calls: list[Mapping[str, Any]] = []  # the calls of pending actions, by number
        self._results: list[Mapping[str, Any] | None] = []
        #: Action number -> plan index of a planned result read without its line (``_quiet``).
        self._planned_actions: dict[int, int] = {}
        #: Call id of a later result -> (key, command) of the older copies that point to it.
        self._duplicates: dict[str, list[tuple[str, str | None, bool]]] = {}
        self.open_items: list[str] = []
        self.summaries: list[str] = []
        self.last_step: list[str] = []
        self.texts: list[str] = []
        self.anchor = -1  # index of the first ``SUMMARY_ANCHOR`` turn, if any
        #: The person's words of the newest request after the anchor (of all turns when there
        #: is none), whole (``request_text``).
        self.latest_request: str | None = None
        #: What the turns before the anchor held, as the walk had it there: their requests,
        #: their newest request and how many of ``summaries`` are theirs (``build_handoff``
        #: puts the older turns' facts before the previous summary's, the newer turns' after).
        self.older_requests: list[str] = []
        self.older_latest: str | None = None
        self.older_summaries = 0
        #: Results the free passes planned to demote, read as their one-liners (see ``_result``).
        self._demotions = demotions
        self._planned_calls = demotions.plan.planned if demotions is not None else None
        #: The last text ``clip`` redacted, and its redaction (see ``redacted``).
        self._last_redacted = ("", "")
        self._collect(turns)

    def clip(self, text: str, limit: int) -> str:
        """``_clip`` with the last redaction remembered: the walk clips one command for its
        key, its failure and its success count (one pasted target twice), one after another,
        and redacts it once."""
        return _clip(text, limit, self.redacted)

    def redacted(self, text: str) -> str:
        """``redact(text)``, reusing the last result when ``text`` is the last text redacted."""
        raw, redacted = self._last_redacted
        if text != raw:
            redacted = redact(text)
            self._last_redacted = (text, redacted)
        return redacted

    @property
    def requests(self) -> list[str]:
        return list(self._requests)

    @property
    def decisions(self) -> list[str]:
        return list(self._decisions)

    def _collect(self, turns: Sequence[Mapping[str, Any]]) -> None:
        # The pairing rule (ids are reused by real providers). Nearly every assistant message's
        # results follow it in its calls' order (``answered_in_order``): read right there. The
        # whole list is matched, (assistant index, call) -> result, only once one is not.
        results: dict[tuple[int, int], int] | None = None
        last_assistant_text = ""
        last_action: _Action = ""
        todos: list[str] | None = None
        for index, turn in enumerate(turns):
            role = turn.get("role")
            if role == "tool":  # read with its call (nearly half of all turns: one test)
                continue
            if role != "user" and role != "assistant":
                # Results are read with their calls; system turns hold no facts, but the first
                # anchor splits the turns (``build_handoff``): noted here, not by another walk.
                if role == "system" and self.anchor < 0 and turn.get("content") == SUMMARY_ANCHOR:
                    self._mark_anchor(index)
                continue
            text = _turn_text(turn, role)
            if role == "user":
                self._user_turn(turn, text, last_assistant_text)
                continue
            if text.strip():
                self.texts.append(text)
                last_assistant_text = text
                # Edits written into the reply (Aider's blocks, Cline's XML tools, patches).
                for path, verb, how in text_edits(text):
                    self.files.add(path, verb, how)
            calls = turn.get("tool_calls")
            if calls:
                results, action, todo_list = self._read_calls(turns, index, calls, results)
                last_action = last_action if action is None else action
                todos = todos if todo_list is None else todo_list
        self._finish(last_assistant_text, last_action, todos)

    def _mark_anchor(self, index: int) -> None:
        """The first ``SUMMARY_ANCHOR`` turn: what the walk holds so far is the older turns'."""
        self.anchor = index
        self.older_requests = list(self._requests)
        self.older_latest, self.latest_request = self.latest_request, None
        self.older_summaries = len(self.summaries)

    def _user_turn(self, turn: Mapping[str, Any], text: str, last_assistant_text: str) -> None:
        # The placeholder opens with "(": not a plain request.
        if _plain_request(turn, text) and not is_handoff(text, last_assistant_text):
            self.texts.append(text)
            self._add_request(text)
            self.latest_request = text
            return
        if summary_author(turn) is not None:
            self.summaries.append(redact(text))
            return
        if is_observation(turn):
            self._observation(turn, text, last_assistant_text)
            return
        if turn.get("_injected") == "orphan-tool-result":
            # A result that answers no call: kept as what it is, never an error item.
            self.actions.append(self.clip(redact(text), ITEM_MAX))
            return
        if text[:1] == "[":
            self._pasted_result(text)  # a tool result pasted as user text (Cline/Roo)
        # Its <feedback> may count as the person's words.
        words = request_text(turn, last_assistant_text, text=text)
        if words is None or words.strip() == NO_USER_SENTINEL:
            return
        self.texts.append(words)
        self._add_request(words)
        self.latest_request = words

    def _read_calls(
        self, turns: Sequence[Mapping[str, Any]], index: int, calls: Any,
        results: dict[tuple[int, int], int] | None,
    ) -> tuple[dict[tuple[int, int], int] | None, _Action | None, list[str] | None]:
        """The calls of the assistant turn at ``index`` with their results: ``(results``, the
        pairing of the whole list once it was needed, ``last action`` read (``None``: none),
        ``todo list`` the calls set (``None``: none)``)``."""
        ordered = answered_in_order(turns, index)
        if not ordered and results is None:
            answers, _unanswered = match_results(turns)
            results = {match: i for i, match in answers.items()}
        positions = self._demotions.positions if self._demotions is not None else None
        last_action: _Action | None = None
        todos: list[str] | None = None
        position = -1
        for call in calls:
            position += 1
            if type(call) is not dict and not isinstance(call, Mapping):
                continue
            at = index + 1 + position if ordered else results.get((index, position))  # type: ignore[union-attr]
            result = None if at is None else turns[at]
            planned = -1
            if result is not None and positions is not None and at is not None:
                found = positions.get(at)  # ``demotions.index``, inline
                if found is not None:
                    planned = found
            last_action, todo_list = self._call(call, result, planned)
            if todo_list is not None:
                todos = todo_list
        return results, last_action, todos

    def _finish(self, last_assistant_text: str, last_action: _Action, todos: list[str] | None) -> None:
        """What the walk knows once it is over: the open todos, the copies whose later result
        lies beyond these turns, the questions and the last step of the newest reply."""
        if todos:
            self.open_items.extend(todos)
        # Copies whose later result lies beyond these turns: a success unless flagged failed
        # (that failure is the later copy's, told once, where it is).
        for copies in self._duplicates.values():
            for copy_key, copy_command, flagged in copies:
                if not flagged:
                    self._succeeded(copy_key, copy_command)
        self._duplicates.clear()
        for shown in [c for c, n in self.succeeded_commands.items() if not n]:
            del self.succeeded_commands[shown]
        # The one assistant text quoted whole: redacted while its lines are still lines.
        last_assistant_text = redact(last_assistant_text)
        for sentence in _SENTENCE.split(last_assistant_text):
            sentence = sentence.strip()
            if sentence.endswith("?") and len(sentence) > 8:
                self.open_items.append(self.clip(sentence, ITEM_MAX))
        if last_assistant_text.strip():
            self.last_step.append("assistant: " + self.clip(last_assistant_text, RECENT_TEXT_MAX))
        if last_action:
            self.last_step.append("last tool call: " + self.line(last_action))

    def _quiet(self, name: str, kind: _Kind, arguments: Any, args: Mapping[str, Any], result: Mapping[str, Any],
               planned: int) -> bool:
        """Whether a planned result reads, as its one-liner, as a plain success - decided
        without building the line: the free passes paired it with this very call, the call's
        line is certain to be a plain one-liner (``plain_line_certain``: our demoted form, no
        error part) and the result did not fail (its verdict, which the line would hold).
        Edits without a path are left out: their file is read from the line itself."""
        if not kind[_PLAIN] or not plain_line_arguments(name, arguments, None if args is _NO_ARGS else args):
            return False
        if not self._answers(planned, name, arguments):
            return False
        return failure_of(result["content"], is_error=result.get("_is_error"), reads=is_read_tool(name, args)) is None

    def _answers(self, planned: int, name: str, arguments: Any) -> bool:
        """Whether the free passes paired planned result ``planned`` with this very call
        (``PrunePlan.call_of``, read from its table where the call is noted)."""
        found = self._planned_calls[planned]  # type: ignore[index]
        if found is None:
            found = self._demotions.plan.call_of(planned)  # type: ignore[union-attr]
        return bool(found[0] == name and found[1] == arguments)

    def _judged_line(self, name: str, kind: _Kind, arguments: Any, args: Mapping[str, Any],
                     result: Mapping[str, Any], planned: int) -> tuple[str, Failure | None] | None:
        """(one-liner, verdict) of a planned result that is not ``_quiet``, read as the free
        passes' line would be, or ``None`` for the general way (``_result``).

        The line is built as ``tool_line`` builds it but outside the memo: that line, read back,
        would be our own demoted line of this call (it starts with the tool's name, is one line
        under 800 characters, shorter than the result and marked as demoted), and its outcome the
        verdict ``tool_line`` keeps with it (``line_verdict``: a remembered result, at least
        ``CACHE_MIN_CHARS`` long, arguments as text), which is this very verdict. Anything else
        goes the general way."""
        content = result["content"]
        if type(arguments) is not str or type(content) is not str or len(content) < CACHE_MIN_CHARS:
            return None
        if not self._answers(planned, name, arguments):
            return None
        is_error = result.get("_is_error")
        entry = memo_entry(content)
        if entry[0] is content and entry[3] == (name, arguments, is_error):
            line, verdict = entry[4], entry[2]  # built before (``tool_line``), with its verdict
        else:
            parsed = args if args is not _NO_ARGS else parse_arguments(arguments)
            verdict = failure_of(content, is_error=is_error, reads=is_read_tool(name, parsed))
            line = line_with_verdict(name, parsed, content, verdict)  # type: ignore[arg-type]
        if line is None or len(line) >= len(content) or "MEDIA:" in line or not _names_itself(line, name) \
                or line.startswith(DUPLICATE_PREFIX) or not (kind[_LINE] or looks_demoted(line)):
            return None
        return line, verdict

    def _result(self, result: Mapping[str, Any], planned: int) -> Mapping[str, Any]:
        """A planned result as the free passes would have left it: its one-liner when shorter."""
        line = self._demotions.plan.line(planned)  # type: ignore[union-attr]
        if line is None:
            return result
        return {**result, "content": line}

    def _add_request(self, text: str) -> None:
        item = self.clip(text, REQUEST_ITEM_MAX)
        requests = self._requests
        requests.pop(item, None)
        requests[item] = None
        if not _may_decide(text):
            return
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            if len(sentence) >= 8 and _DECISION.search(sentence):
                self._decisions.setdefault(self.clip(sentence, ITEM_MAX))

    def _call(
        self, call: Mapping[str, Any], result: Mapping[str, Any] | None, planned: int = -1
    ) -> tuple[_Action, list[str] | None]:
        """Read one call and its result. ``planned``: the result's index in the free passes'
        plan when they planned to demote it (it is raw here; see ``_quiet``)."""
        # Name and arguments (parsed only for ``_ARGUMENT_TOOLS``), inline: this runs once per
        # call of the middle.
        raw = call.get("function")
        fn: Mapping[str, Any] = raw if type(raw) is dict or isinstance(raw, Mapping) else _NO_ARGS
        arguments = fn.get("arguments")
        name = fn.get("name") or "unknown"
        if type(name) is not str:
            name = str(name)
        kind = _KINDS.get(name)
        if kind is None:
            kind = _kind_of(name)
        args = parse_arguments(arguments) if kind[_ARGUMENT] else _NO_ARGS
        if result is not None and result.get("role") == "tool" and is_no_result(result):
            result = None  # a placeholder: no outcome, neither a failure nor a success (issue 29)
            planned = -1
        read = self._read(name, kind, arguments, args, result, planned)
        action: _Action = read.content
        if not read.demoted:
            calls = self._calls
            action = len(calls)
            calls.append(call)
            self._results.append(read.result)
        self.actions.append(action)
        command = command_of(args) if kind[_SHELL] else None
        path_key = self._files_of(name, kind, args, read.content, command)
        if read.result is not None:
            if command:
                key = f"`{self.clip(command, 160)}`"
            elif path_key:
                key = path_key
            else:
                key = f"{name} {self.clip(arguments if type(arguments) is str else str(arguments or ''), 300)}"
            failed = self._verdict(name, arguments, args, read, key, command)
            self._record(call, name, action, key, command, path_key, failed)
        if kind[_SPECIAL]:
            return action, self._special(name, args)
        return action, None

    def _read(self, name: str, kind: _Kind, arguments: Any, args: Mapping[str, Any],
              result: Mapping[str, Any] | None, planned: int) -> _Reading:
        """How the result of a call reads: as its one-liner when the free passes planned it
        (``_quiet``, ``_judged_line``), else as it is."""
        quiet = False
        judged = None
        if planned >= 0:
            quiet = kind[_PLAIN] and self._quiet(name, kind, arguments, args, result, planned)  # type: ignore[arg-type]
            if not quiet:
                judged = self._judged_line(name, kind, arguments, args, result, planned)  # type: ignore[arg-type]
                if judged is None:
                    result = self._result(result, planned)  # type: ignore[arg-type]
        if judged is not None:
            # Read as its line, which is our demoted line: the action is that line.
            return _Reading(result, judged[0], result.get("_is_error"), True, True, False, judged)  # type: ignore[union-attr]
        if quiet:
            # Read as its one-liner would be: a success line, built only if it is shown.
            self._planned_actions[len(self._calls)] = planned
            return _Reading(result, result["content"], result.get("_is_error"), False, False, True, None)  # type: ignore[index, union-attr]
        if result is None:
            return _Reading(None, "", False, False, False, False, None)
        content = result.get("content")
        if type(content) is not str or "MEDIA:" in content or len(content) > TURN_HARD_MAX:
            content = message_text(result)
        # Our one-liner of this very tool: "[name] ..." (no f-string built per call).
        # (A planned result is read as its line: the same verdict as when a pass built it.)
        own = _names_itself(content, name)
        demoted = own and (looks_demoted(content) or kind[_LINE])
        return _Reading(result, content, result.get("_is_error"), demoted, own, False, None)

    def _files_of(self, name: str, kind: _Kind, args: Mapping[str, Any], content: str,
                  command: str | None) -> str | None:
        """Note the files a call wrote or read; the one its outcome is keyed by, if any."""
        files = self.files
        if command:  # files the command writes (heredoc, redirection, tee, sed -i)
            for path, verb, _how in shell_writes(command):
                files.add(path, verb, name)
        # Only tools that name files (``_kind_of``); a shell names them with a command list.
        paths = file_actions(name, args, content) if kind[_FILES] and (
            not kind[_SHELL] or isinstance(args.get("command"), list)) else None
        if not paths:
            return None
        for path, verb in paths:
            files.add(path, verb, name)
        # The first changed path, else the first (one path, the usual case: that one).
        return paths[0][0] if len(paths) == 1 else next((p for p, v in paths if v != "read"), None) or paths[0][0]

    def _verdict(self, name: str, arguments: Any, args: Mapping[str, Any], read: _Reading, key: str,
                 command: str | None) -> Any:
        """``_failed``'s form of a result's outcome (``None``: a success), or ``_DUPLICATE``."""
        content = read.content
        if content[:1] == "[" and content.startswith(DUPLICATE_PREFIX):
            # A back-reference, not an outcome: the later copy it names carries it (_resolve).
            found = content.find(DUPLICATE_OF_CALL)
            if found != -1:
                later = content[found + len(DUPLICATE_OF_CALL):].split(";", 1)[0]
                self._duplicates.setdefault(later, []).append((key, command, bool(read.is_error)))
            if command:  # its place among the successes, taken if the later copy succeeds
                self.succeeded_commands.setdefault(self.clip(command, 80), 0)
            return _DUPLICATE
        if read.quiet:
            return None
        if read.judged is not None:
            return _failed(read.judged[1])
        if read.own:
            # One of our lines, left by an earlier pass: the verdict it was built from.
            known, verdict = line_verdict(content)
            if known:
                return _failed(verdict)
            # A line of an earlier process: its error part follows what the call named.
            return _demoted_failure(content, _named(arguments)) if "; " in content else None
        return _failed(failure_of(content, is_error=read.is_error, reads=is_read_tool(name, args)))

    def _record(self, call: Mapping[str, Any], name: str, action: _Action, key: str, command: str | None,
                path_key: str | None, failed: Any) -> None:
        """Record a result's outcome, and settle the older copies that point to it."""
        if self._duplicates and failed is not _DUPLICATE:
            copies = self._duplicates.pop(str(call.get("id") or ""), None)
            if copies and failed is None:  # a copy of a success is a success; of a failure, that one failure
                for copy_key, copy_command, _flag in copies:
                    self._succeeded(copy_key, copy_command)
        if failed is None:  # most results
            self._succeeded(key, command)
        elif failed is not _DUPLICATE:
            # What an error item names.
            shown = key if command or path_key else self.line(action).split(" (", 1)[0].split("; ", 1)[0]
            self._outcome(key, shown if command or not path_key else f"[{name}] {shown}", command, failed)

    def _special(self, name: str, args: Mapping[str, Any]) -> list[str] | None:
        """A todo list's open items (returned: the newest list wins), or a question asked."""
        if name in _TODO_TOOLS:
            todos = args.get("todos")
            if isinstance(todos, list):
                return [
                    self.clip(str(t.get("content") or t.get("task") or t), 200) + f" ({t.get('status')})"
                    for t in todos if isinstance(t, Mapping) and t.get("status") not in ("completed", "done", "cancelled")
                ]
        elif isinstance(args.get("question"), str):  # clarify
            self.open_items.append(self.clip(args["question"], ITEM_MAX))
        return None

    def line(self, action: _Action) -> str:
        """The one-liner of an action (see ``_Action``)."""
        if isinstance(action, str):
            return action
        planned = self._planned_actions.get(action)
        if planned is not None:
            line = self._demotions.plan.line(planned)  # type: ignore[union-attr]
            if line is not None:
                return line  # the free passes' very line (else the result stays, as below)
        call, result = self._calls[action], self._results[action]
        raw = call.get("function")
        fn: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        if result is None:  # never recorded, or only a placeholder: say so, claim nothing
            return no_result_line(str(fn.get("name") or "unknown"), parse_arguments(fn.get("arguments")))
        content = message_text(result)
        is_error = result.get("_is_error")
        return summarize_tool_result(str(fn.get("name") or "unknown"), fn.get("arguments"), content, is_error)

    def _outcome(self, key: str, target: str, command: str | None, failed: tuple[str | None, str] | None) -> None:
        """Record one result: an error item (and failed command) or a success, resolving the key."""
        if failed is not None:
            code, error = failed
            exit_part = f" -> exit {code}" if code else ""
            self.errors.append((key, f"{target}{exit_part}: {error}"))
            self.error_keys_failing[key] = len(self.errors)
            self.resolved.discard(key)
            if command:
                self.failed_commands.append(f"`{self.clip(command, 160)}`{exit_part or ' -> failed'}: {self.clip(error, 160)}")
            return
        self._succeeded(key, command)

    def _succeeded(self, key: str, command: str | None) -> None:
        """Record a success: it resolves an error of the same key; a command counts once more."""
        self.succeeded.add(key)
        if key in self.error_keys_failing:
            self.resolved.add(key)
        if command:
            shown = self.clip(command, 80)
            self.succeeded_commands[shown] = self.succeeded_commands.get(shown, 0) + 1

    def _pasted_result(self, text: str) -> bool:
        """A tool result pasted as user text (Cline/Roo): an outcome keyed by its command or
        target, a failure only on evidence (``failure_of``, or the harness's own ``<error>``
        report); a file tool's own output (a file, a listing) is no evidence. ``False`` when
        ``text`` is no such result."""
        found = pasted_result(text)
        if found is None:
            return False
        tool, target, body = found
        reported = _PASTED_ERROR.search(body) if "<error>" in body else None
        if reported is not None:
            first, last = error_lines(reported.group(1))
            failure: Failure | None = Failure(None, compose_error(first, last), location(reported.group(1)))
        else:
            failure = failure_of(body, reads=tool in _PASTED_READS or tool in READ_TOOLS)
        shell = tool in SHELL_TOOLS
        command = target if shell and target else None
        key = f"`{self.clip(target, 160)}`" if command else (target or tool)
        shown = key if command else f"[{tool}] {self.clip(target, 160)}".rstrip()
        self._outcome(key, shown, command, _failed(failure))
        line = shown if failure is None else f"{shown}; {redact(failure.error or 'failed')}"
        self.actions.append(line if command is None else f"[{tool}] ran {line}")
        return True

    def _observation(self, turn: Mapping[str, Any], text: str, said: str) -> None:
        """Output a text agent (SWE-agent 0.x, Aider) got back in the user role: an error item
        when it failed, keyed by the command of the reply before it; the files Aider edited."""
        for path in applied_edits(text):
            self.files.add(path, "modified", "aider")
        block = react_block(said)
        command = react_command(said)
        if block is not None:  # the reply's action ran: the files it writes
            for path, verb, _how in shell_writes(block):
                self.files.add(path, verb, "shell")
        failure = failure_of(text, is_error=turn.get("_is_error") or turn.get("_injected") == "error-observation")
        if command is None and failure is None:
            return
        key = f"`{self.clip(command, 160)}`" if command else "(observation)"
        self._outcome(key, key, command, _failed(failure))

    def succeeded_key_set(self) -> set[str]:
        """Keys (commands, files) a call succeeded on and no later call failed on."""
        return self.resolved | {key for key in self.succeeded if key not in self.error_keys_failing}

    def error_items(self) -> tuple[list[str], list[str]]:
        """(still failing, resolved) error items, oldest first, one per key and error text."""
        failing: list[str] = []
        resolved: list[str] = []
        seen: set[str] = set()
        for key, text in reversed(self.errors):
            if text in seen:
                continue
            seen.add(text)
            (resolved if key in self.resolved else failing).append(f"{text} — {RESOLVED if key in self.resolved else STILL_FAILING}")
        failing.reverse()
        resolved.reverse()
        return failing, resolved

    def command_items(self) -> list[str]:
        items = list(dict.fromkeys(self.failed_commands))
        if self.succeeded_commands:
            total = sum(self.succeeded_commands.values())
            shown = ", ".join(f"`{c}` ×{n}" if n > 1 else f"`{c}`" for c, n in self.succeeded_commands.items())
            items.append(self.clip(f"succeeded ({total}): {shown}", 900))
        return items


# --- parsing a previous summary ---------------------------------------------------------------

_HEADING = re.compile(r"^(?:#{1,4}\s+(.+?)|(?:\d+\.\s+)?\*{0,2}([A-Z][^:\n]{2,60}?)\*{0,2}:\s*)$")


def _foreign_section(title: str) -> str:
    """Our section for another summariser's heading, by the heading's own words."""
    lowered = title.lower()
    if title in _ALIASES:
        return _ALIASES[title]
    if title in _KNOWN:
        return title
    for words, section in (
        (("error", "fix", "fail", "blocker"), ERRORS),
        (("file",), FILES),
        (("user message", "user request", "messages from the user"), REQUESTS),
        (("decision", "constraint", "preference", "instruction"), DECISIONS),
        (("pending", "next", "remaining", "open", "todo"), OPEN),
        (("current work", "in progress", "current state"), LAST_STEP),
        (("command",), COMMANDS),
        (("action", "done", "completed"), ACTIONS),
    ):
        if any(word in lowered for word in words):
            return section
    return EARLIER


def parse_sections(summary: str) -> dict[str, list[str] | str]:
    """The sections of an earlier handoff - ours, or another agent's mapped by its headings.

    ``Latest user request`` is text; every other section a list of items. Text under no
    heading, or under a heading that maps to nothing, is kept in ``Earlier summary``.
    """
    found = split_summary_text(summary)
    if found is not None:
        summary = found[1]
    for opening, _author in (("This session is being continued", ""), ("Another language model started", "")):
        if summary.lstrip().startswith(opening):
            summary = summary.split("\n", 1)[1] if "\n" in summary else ""
    sections: dict[str, list[str] | str] = {}
    current: str | None = None
    buffer: list[str] = []

    def flush() -> None:
        lines = [line for line in buffer if line.strip()]
        if not lines:
            return
        if current == LATEST:
            sections[LATEST] = "\n".join(buffer).strip("\n")
            return
        target = current or EARLIER
        items = sections.setdefault(target, [])
        assert isinstance(items, list)
        for line in lines:
            stripped = line.strip()
            bullet = re.match(r"^(?:[-*•]|\d+[.)])\s+(.*)$", stripped)
            if bullet:
                items.append(bullet.group(1))
            elif stripped.startswith("(… ") and stripped.endswith("omitted)"):
                continue
            elif items and line[:1] in (" ", "\t"):
                items[-1] += " " + stripped
            else:
                items.append(_clip(stripped, 1_500) if target == EARLIER else stripped)

    for line in summary.splitlines():
        heading = _HEADING.match(line.strip()) if line.strip() else None
        if heading and (line.startswith("#") or current != LATEST):
            title = (heading.group(1) or heading.group(2) or "").strip().strip("*").strip()
            if title.startswith(FOCUS_PREFIX):
                flush()
                current, buffer = "__focus__", []
                continue
            flush()
            current = title if title == LATEST else _foreign_section(title)
            buffer = []
            continue
        buffer.append(line)
    flush()
    sections.pop("__focus__", None)  # a focus is per compression; its facts live elsewhere
    return sections


# --- assembling under the cap -------------------------------------------------------------------


def _merge(*groups: Sequence[str]) -> list[str]:
    out: dict[str, None] = {}
    for group in groups:
        _merge_into(out, group)
    return list(out)


def _merge_into(out: dict[str, None], items: Sequence[str]) -> None:
    """``items`` added to the ordered set ``out`` (``_merge`` one group at a time)."""
    for item in items:
        item = item.strip()
        if item:
            out.pop(item, None)
            out[item] = None  # a repeated item moves to its newest place


def _merge_errors(previous: Sequence[str], failing: Sequence[str], resolved_now: Sequence[str],
                  facts: _Facts) -> tuple[list[str], list[str]]:
    """Previous error items re-judged by the new turns, then the new ones."""
    old_failing: list[str] = []
    old_resolved: list[str] = []
    succeeded = facts.succeeded_key_set()  # once: built per item, the merge was quadratic
    for item in previous:
        status = _STATUS.search(item)
        body = item[: status.start()] if status else item
        key = body.split(": ", 1)[0].split(" -> exit ", 1)[0]
        key = key.split("] ", 1)[1] if key.startswith("[") and "] " in key else key
        if (status and status.group(1) == RESOLVED) or key in succeeded:
            old_resolved.append(f"{body} — {RESOLVED}")
        elif status:
            old_failing.append(f"{body} — {STILL_FAILING}")
        else:  # another summariser's error item: its status is its own words
            old_resolved.append(body)
    new_bodies = {_STATUS.sub("", i) for i in (*failing, *resolved_now)}
    old_failing = [i for i in old_failing if _STATUS.sub("", i) not in new_bodies]
    old_resolved = [i for i in old_resolved if _STATUS.sub("", i) not in new_bodies]
    return _merge(old_failing, failing), _merge(old_resolved, resolved_now)


#: The share of the room left each tier may take in ``_Budget.fill``'s first pass.
_SHARES = {"failing": 0.4, "changed": 0.35, "decisions": 0.3, "requests": 0.0, "commands": 0.25,
           "resolved": 0.3, "open": 0.3, "last": 0.4, "read": 0.3, "earlier": 0.5, "actions": 1.0}


class _Budget:
    """Room-giving by tiers: a tier takes its newest items first, up to a share of what is left
    or all of it; a tier asked again later takes its older items from the room that remains.
    Tiers render under their section's title, in the order they were first offered."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.tiers: dict[str, tuple[str, list[str]]] = {}
        self.lines: dict[str, Callable[[Any], str]] = {}
        self.picked: dict[str, int] = {}
        self.titled: set[str] = set()

    def offer(self, tier: str, title: str, items: Sequence[Any], line: Callable[[Any], str] = str) -> None:
        """``line`` makes an item a line when it is picked (actions are numbers until then)."""
        self.tiers[tier] = (title, list(items))
        self.lines[tier] = line
        self.picked[tier] = 0

    def take(self, tier: str, share: float = 1.0, *, numbered: bool = False) -> None:
        title, items = self.tiers[tier]
        left = len(items) - self.picked[tier]
        if left <= 0:
            return
        allowance = int(self.room * share)
        used = 0 if title in self.titled else len(title) + 5 + 40  # heading, blank line, omission note
        if used >= allowance:
            return
        count = self.picked[tier]
        line = self.lines[tier]
        for index in range(len(items) - count - 1, -1, -1):
            item = items[index]
            if type(item) is not str:
                item = items[index] = line(item)
            cost = len(item) + (7 if numbered else 3)
            if used + cost > allowance:
                break
            used += cost
            count += 1
        if count > self.picked[tier]:
            self.titled.add(title)
            self.picked[tier] = count
            self.room -= used

    def fill(self) -> None:
        """Every tier offered takes its items: first in the priority order, each within a
        share of what is left, so a flood of one kind cannot crowd out the next; then the same
        order takes what remains. (The requests took theirs before: the first pass gives them
        nothing more, the second what remains for any left out.)"""
        for tier, share in _SHARES.items():
            self.take(tier, share, numbered=tier == "actions")
        for tier in _SHARES:
            self.take(tier, numbered=tier == "actions")

    def render(self, title: str, *, numbered: bool = False) -> str:
        chosen: list[str] = []
        omitted = 0
        for tier, (tier_title, items) in self.tiers.items():
            if tier_title != title:
                continue
            count = self.picked[tier]
            omitted += len(items) - count
            chosen.extend(items[len(items) - count:])
        if not chosen:
            return f"## {title}\n({omitted} item{'s' if omitted != 1 else ''} left out for room)\n" if omitted else ""
        lines = [f"## {title}"]
        if omitted:
            lines.append(f"(… {omitted} earlier item{'s' if omitted != 1 else ''} omitted)")
        start = omitted + 1
        for offset, item in enumerate(chosen):
            lines.append(f"{start + offset}. {item}" if numbered else f"- {item}")
        return "\n".join(lines) + "\n"


#: The share of the summary's room the user requests may take before other sections.
REQUEST_SHARE = 0.5
#: The shortened form of an old request: its opening, this long at most.
REQUEST_SHORT = 100
#: A shortened request keeps at least this much of its opening (a word boundary is looked for
#: between this and ``REQUEST_SHORT``).
REQUEST_SHORT_MIN = 84


def _short(item: str) -> str:
    """A request item's opening (``REQUEST_SHORT`` characters at most), cut at a word boundary."""
    if len(item) <= REQUEST_SHORT:
        return item
    cut = item.rfind(" ", REQUEST_SHORT_MIN, REQUEST_SHORT - 1)
    if cut == -1:
        cut = REQUEST_SHORT - 1
    return item[:cut].rstrip() + "…"


def fit_requests(items: Sequence[str], room: int) -> list[str]:
    """``items`` (oldest first) within ``room`` characters of list lines: whole while they fit,
    else the oldest shortened (``_short``) one by one until they do; if even all short forms do
    not fit, the newest that fit (the budget counts the ones left out)."""
    out = list(items)
    cost = sum(len(item) + 3 for item in out) + 60  # heading and omission note
    for index, item in enumerate(out):
        if cost <= room:
            break
        short = _short(item)
        cost -= len(item) - len(short)
        out[index] = short
    return out


def _focus_lines(facts: _Facts, topic: str) -> list[str]:
    words = [w for w in re.findall(r"[\w\-./]+", topic.lower()) if len(w) >= 3 and w not in _STOPWORDS]
    if not words:
        return []
    found: list[str] = []
    for line in [*map(facts.line, facts.actions), *(t for _k, t in facts.errors), *facts.decisions]:
        if any(w in line.lower() for w in words) and line not in found:
            found.append(line)
    for text in facts.texts:
        for piece in text.splitlines():
            piece = piece.strip()
            if piece and any(w in piece.lower() for w in words):
                clipped = _clip(piece, 400)
                if clipped not in found:
                    found.append(clipped)
    return found


def split_at_anchor(turns: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(turns older than the previous summary, turns newer than it); see ``SUMMARY_ANCHOR``."""
    for index, turn in enumerate(turns):
        if turn.get("role") == "system" and turn.get("content") == SUMMARY_ANCHOR:
            return list(turns[:index]), list(turns[index + 1:])
    return [], list(turns)


def build_handoff(
    turns: Sequence[Mapping[str, Any]],
    *,
    previous_summary: str | None = None,
    focus_topic: str | None = None,
    max_chars: int = MAX_CHARS,
    note: str | None = None,
    demotions: TurnDemotions | None = None,
) -> str:
    """The structured handoff for ``turns`` (merged with ``previous_summary``), ≤ ``max_chars``.

    ``demotions``: the results among ``turns`` that the free passes planned to demote (handed
    raw, see ``PrunePlan``); each is read as its one-liner, which is built only where it shows.

    Turns before a ``SUMMARY_ANCHOR`` turn are older than the previous summary (a formerly
    protected head): their facts go before the summary's, the newer turns' after.
    """
    max_chars = max(1_000, int(max_chars))
    # One walk over all the turns, the anchor included: it notes what the turns before the
    # anchor held (requests, summaries), so neither side is read again on its own.
    facts = _Facts(turns, demotions)
    previous = _previous_sections(facts, previous_summary)

    def prev(title: str) -> list[str]:
        value = previous.get(title)
        return list(value) if isinstance(value, list) else []

    prev_latest = previous.get(LATEST)
    prev_latest_text = prev_latest if isinstance(prev_latest, str) and prev_latest.strip() \
        and prev_latest.strip() != NO_USER_SENTINEL else None
    latest_full = facts.latest_request  # ``None``: no request after the anchor
    if latest_full is None:
        latest_full = prev_latest_text or facts.older_latest

    # Requests: older turns', then the previous summary's (its latest one included), then new.
    older_requests = facts.older_requests
    previous_requests = prev(REQUESTS) + ([_clip(prev_latest_text, REQUEST_ITEM_MAX)] if prev_latest_text else [])
    older_set = set(older_requests)
    requests = _merge(older_requests, previous_requests, [r for r in facts.requests if r not in older_set])
    failing, resolved = facts.error_items()
    failing, resolved = _merge_errors(prev(ERRORS), failing, resolved, facts)
    files, earlier = _merged_files(prev(FILES), prev(EARLIER), facts)

    parts: list[str] = []
    if note:
        parts.append(note.strip() + "\n")
    # The latest request is redacted once for its verbatim form and its item (``latest_item``).
    parts.append(f"## {LATEST}\n{verbatim(facts.redacted(latest_full), REQUEST_MAX) if latest_full else NO_USER_SENTINEL}\n")
    fixed = sum(len(p) + 1 for p in parts)
    budget = _Budget(max(0, max_chars - fixed - 8))
    focus_block = _focus_block(budget, facts, focus_topic)
    latest_item = facts.clip(latest_full, REQUEST_ITEM_MAX) if latest_full else None
    # The person's requests first (issue 29): every one is kept while the budget allows, the
    # oldest shortened to their opening when it is tight; only past that are the oldest left out
    # (counted). The share bounds what they may take; they take only what they need.
    request_room = int(budget.room * REQUEST_SHARE)
    budget.offer("requests", REQUESTS, fit_requests([r for r in requests if r != latest_item], request_room))
    budget.take("requests", REQUEST_SHARE)
    budget.offer("failing", ERRORS, failing)
    budget.offer("changed", FILES, files.items(changed=True))
    budget.offer("decisions", DECISIONS, _merge(prev(DECISIONS), facts.decisions))
    budget.offer("commands", COMMANDS, _merge(prev(COMMANDS), facts.command_items()))
    budget.offer("resolved", ERRORS, resolved)
    budget.offer("open", OPEN, _merge(prev(OPEN), facts.open_items)[-12:])
    budget.offer("last", LAST_STEP, facts.last_step or prev(LAST_STEP))
    budget.offer("read", FILES, files.items(changed=False))
    budget.offer("earlier", EARLIER, earlier)
    budget.offer("actions", ACTIONS, prev(ACTIONS) + facts.actions, facts.line)
    budget.fill()
    if focus_block:
        parts.append(focus_block)
    return _rendered(parts, budget, max_chars)


def _previous_sections(facts: _Facts, previous_summary: str | None) -> dict[str, list[str] | str]:
    """The sections of the summaries among the turns and of ``previous_summary``, merged in
    the order they were written (the older turns', the previous one, the newer turns')."""
    older_summaries = facts.summaries[: facts.older_summaries]
    newer_summaries = facts.summaries[facts.older_summaries:]
    # Each section's items merged into one ordered set as the summaries come (copying the
    # merged list for every summary was quadratic: a long session holds hundreds of them).
    previous: dict[str, dict[str, None] | str] = {}
    for text in [*older_summaries, *([previous_summary] if previous_summary else []), *newer_summaries]:
        for title, value in parse_sections(text).items():
            if isinstance(value, str):
                previous[title] = value
                continue
            merged = previous.get(title)
            if not isinstance(merged, dict):
                merged = previous[title] = {}
            _merge_into(merged, value)
    return {title: list(value) if isinstance(value, dict) else value for title, value in previous.items()}


def _merged_files(previous: list[str], earlier: list[str], facts: _Facts) -> tuple[_Files, list[str]]:
    """The previous summaries' file items with the turns' files; another summariser's prose
    about files goes to ``earlier`` (returned with them)."""
    files = _Files()
    for item in previous:
        if _FILE_ITEM.match(item) or re.match(r"^\S+ \((?:[a-z]+, )*[a-z]+\)$", item):
            files.merge_item(item)
        else:  # another summariser's prose about files
            earlier.append(_clip(item, 600))
    for path, (verb, tools) in facts.files.entries.items():
        for tool, count in tools.items():
            files.add(path, verb, tool, count)
    return files, earlier


def _focus_block(budget: _Budget, facts: _Facts, focus_topic: str | None) -> str:
    """The focus section (its items taken from ``budget`` first), or "" without a topic."""
    if not focus_topic or not focus_topic.strip():
        return ""
    title = FOCUS_PREFIX + _clip(focus_topic, 120)
    focus_items = _focus_lines(facts, focus_topic)
    if focus_items:
        budget.offer("focus", title, focus_items)
        budget.take("focus", FOCUS_SHARE)
        return budget.render(title)
    block = f"## {title}\n(nothing in the condensed turns mentions this topic)\n"
    budget.room -= len(block) + 1
    return block


def _rendered(parts: list[str], budget: _Budget, max_chars: int) -> str:
    """The handoff's text: ``parts``, then the sections in their order, redacted, ≤ ``max_chars``."""
    for title in ORDER:
        block = budget.render(title, numbered=title == ACTIONS)
        if block:
            parts.append(block)
    # The turns are read unredacted (one pass, no copies): what reaches the summary is
    # redacted here, each item on its own line as in the turn it came from.
    text = redact("\n".join(p.rstrip("\n") + "\n" for p in parts if p).strip())
    if len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars - 2)
        text = text[: cut if cut > 0 else max_chars - 2].rstrip() + "\n…"
    return text


class ExtractiveSummarizer:
    """The ``extractive`` summariser: ``build_handoff`` behind the ``Summarizer`` protocol.

    ``reads_raw_turns``: it redacts what it writes, so the engine hands it the condensed
    messages as they are (no redacted copies, no LLM prompt built) - the turns of a
    ``SummaryRequest`` it gets may hold secrets, and its ``prompt`` is empty.
    """

    name = "extractive"
    reads_raw_turns = True
    #: Takes results the free passes planned to demote raw (``PlannedTurns.demotions``).
    reads_planned_demotions = True

    def __init__(self, config: Config | None = None, *, model: str | None = None) -> None:
        self.config = config
        self.model = model

    def summarize(self, request: SummaryRequest) -> str:
        return build_handoff(
            request.turns,
            previous_summary=request.previous_summary,
            focus_topic=request.focus_topic,
            max_chars=min(request.max_chars or MAX_CHARS, MAX_CHARS),
            demotions=getattr(request.turns, "demotions", None),
        )

"""What the extractive handoff lists, read from the turns' structure in one walk (``Facts``):
requests, decisions, errors and their outcomes, files, commands, open items, the last step.

No keyword found somewhere in a text fills a section: each fact comes from what a turn is (a
request, a call and its result, an observation, a pasted result). See ``extractive``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from hermes_core.plugin import ANTHROPIC_CONTENT, answered_in_order, match_results, redact, tool_call_fields
from hermes_plugins._common.error_text import compose_error, error_lines, location
from hermes_plugins._common.failures import (
    CACHE_MIN_CHARS,
    Failure,
    failure_of,
    is_no_result,
    line_verdict,
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
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR
from hermes_plugins.compressor.instructions import instruction_item, turn_instructions
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
from hermes_plugins.compressor.sections import (
    ITEM_MAX,
    RECENT_TEXT_MAX,
    REQUEST_ITEM_MAX,
    RESOLVED,
    SENTENCE,
    STILL_FAILING,
    FileList,
    clip_text,
)
from hermes_plugins.compressor.serialize import TURN_HARD_MAX, message_text
from hermes_plugins.compressor.server_calls import ServerCall, server_calls, unanswered

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

STOPWORDS = frozenset({"the", "and", "for", "with", "about", "that", "this", "from", "into", "what"})
_EXIT_IN_LINE = re.compile(r" -> exit (-?\d+|\?)")


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
#: it is shown (``Facts.line``; most never are: the section keeps the newest that fit). A number,
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


class _Reading(NamedTuple):
    """How ``Facts._read`` read a call's result."""

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


class Facts:
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
        self.files = FileList()
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
        #: Server-tool and MCP calls whose result has not come yet (``server_calls``).
        self._server_pending: dict[str, Mapping[str, Any]] = {}
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
        """``clip_text`` with the last redaction remembered: the walk clips one command for its
        key, its failure and its success count (one pasted target twice), one after another,
        and redacts it once."""
        return clip_text(text, limit, self.redacted)

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
                for instruction in turn_instructions(turn):  # system text: kept as it stands
                    self._decisions.setdefault(self.clip(instruction_item(instruction), ITEM_MAX))
                self._user_turn(turn, text, last_assistant_text)
                continue
            if text.strip():
                self.texts.append(text)
                last_assistant_text = text
                # Edits written into the reply (Aider's blocks, Cline's XML tools, patches).
                for path, verb, how in text_edits(text):
                    self.files.add(path, verb, how)
            blocks = turn.get(ANTHROPIC_CONTENT)
            if blocks is not None:  # a kept Anthropic reply: the calls the provider ran
                for found in server_calls(blocks, self._server_pending):
                    last_action = self._server_call(found)
            for line in turn.get("server_calls") or ():  # a summariser's prepared turn: its lines
                last_action = self.clip(line, ITEM_MAX)
                self.actions.append(last_action)
            calls = turn.get("tool_calls")
            if calls:
                results, action, todo_list = self._read_calls(turns, index, calls, results)
                last_action = last_action if action is None else action
                todos = todos if todo_list is None else todo_list
        for found in unanswered(self._server_pending):
            self._server_call(found)
        self._finish(last_assistant_text, last_action, todos)

    def _server_call(self, found: ServerCall) -> str:
        """A server-tool or MCP call (``server_calls``) as a client call reads: an action, and
        an error item or a success keyed by the call (its tool and input)."""
        key = self.clip(found.call, 300)
        if found.outcome is None:
            line = f"{key} -> no result recorded"
        else:
            line = f"{key} -> {self.clip(found.outcome, ITEM_MAX)}"
            failed = None if found.error is None else (None, self.clip(found.error, ITEM_MAX))
            self._outcome(key, key, None, failed)
        self.actions.append(line)
        return line

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
        for sentence in SENTENCE.split(last_assistant_text):
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
        for sentence in SENTENCE.split(text):
            sentence = sentence.strip()
            if len(sentence) >= 8 and _DECISION.search(sentence):
                self._decisions.setdefault(self.clip(sentence, ITEM_MAX))

    def _call(
        self, call: Mapping[str, Any], result: Mapping[str, Any] | None, planned: int = -1
    ) -> tuple[_Action, list[str] | None]:
        """Read one call and its result. ``planned``: the result's index in the free passes'
        plan when they planned to demote it (it is raw here; see ``_quiet``)."""
        # Name and arguments (parsed only for ``_ARGUMENT_TOOLS``): a custom call's name and
        # free-text input too.
        _type, name, arguments = tool_call_fields(call)
        name = name or "unknown"
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
        _type, name, arguments = tool_call_fields(call)  # a custom call: its text input
        if result is None:  # never recorded, or only a placeholder: say so, claim nothing
            return no_result_line(name or "unknown", parse_arguments(arguments))
        content = message_text(result)
        is_error = result.get("_is_error")
        return summarize_tool_result(name or "unknown", arguments, content, is_error)

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

"""Phase 1, the free passes (§7): shrink old tool traffic without calling any model.

Four passes over one history - the first three in a single walk - copy-on-write (the input
list and its dicts are never touched; only the messages that change are copied, once):

1. dedupe - identical tool results anywhere in the list: older copies become a back-reference
   to the newest one. Only results that agree on their length and on a short sample can be
   equal, so only those are compared (or, when many are, hashed with xxh3-128).
2. demote - tool results before the protected tail become one informative line (§7.2);
   screenshots become a placeholder.
3. arguments - long tool-call arguments before the tail: the JSON is parsed and only long
   string leaves are shortened, so the arguments stay valid JSON (unparsable ones are left).
4. pressure - when the protected tail alone is over 1.5x its budget, the same demotions run
   inside it, oldest first, keeping the last messages for as long as possible.

``plan_free_passes`` runs them as a plan: the one-liners of pass 2 that were not remembered
from an earlier pass are built on demand (``PrunePlan``), since most old results end up in the
part a summary condenses. ``prune_tool_results`` is the plan with every line built.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

import xxhash

from hermes_core.plugin import (
    MEDIA_PART_TYPES,
    Match,
    bounded,
    content_text,
    estimate_message_tokens,
    match_results,
    pending_calls,
    tool_call_fields,
)
from hermes_plugins.compressor.oneliners import (
    looks_demoted,
    remembered_tool_line,
    summarize_tool_result,
)
from hermes_plugins.compressor.plan import PrunePlan, PruneStats
from hermes_plugins.tools.output_limits import clip_terminal_output

IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})
SCREENSHOT_PLACEHOLDER = "[screenshot removed to save context]"
DUPLICATE_PREFIX = "[duplicate tool output"
TRUNCATED_SUFFIX = "...[truncated]"
#: Results at most this long are worth less than their one-line summary.
MIN_PRUNE_CHARS = 200
#: Tool-call arguments longer than this are shortened ...
LONG_ARGUMENTS_CHARS = 500
#: ... by cutting their string leaves to this many characters.
ARGUMENT_LEAF_CHARS = 200
#: The tail-by-tokens protection never protects fewer than this many messages (when it can).
MAX_TAIL_MESSAGE_FLOOR = 8
#: The pressure pass keeps these last messages untouched while it can.
PRESSURE_KEEP_RECENT = 3
SOFT_CEILING_FACTOR = 1.5
_REASONING_FIELDS = ("reasoning", "reasoning_content")
_UNKNOWN_CALL: tuple[str, Any] = ("unknown", None)
#: Up to this many distinct results of one bucket (length and sample) are compared directly,
#: then hashed.
_DIRECT_COMPARE_MAX = 4
#: The sample of a result that, with its length, picks its dedupe bucket. It skips the first
#: characters, which results of one tool often share (``{"output": "``).
_SAMPLE = slice(32, 64)


def message_tokens(message: dict[str, Any]) -> int:
    """Rough budget tokens of a message: the shared estimate plus replayed reasoning text."""
    tokens = estimate_message_tokens(message)
    if len(message) > 3:
        return tokens  # the estimate read the reasoning fields itself (``_extra_chars``)
    for key in _REASONING_FIELDS:
        extra = message.get(key)
        if extra and isinstance(extra, str):
            tokens += (len(extra) + 3) // 4
    return tokens


#: What ``duplicate_note`` puts before the later copy's call id (readers find the id after it).
DUPLICATE_OF_CALL = "identical to the later result of call "


def duplicate_note(newer_call_id: str) -> str:
    if newer_call_id:
        return f"{DUPLICATE_PREFIX}: {DUPLICATE_OF_CALL}{newer_call_id}; see there]"
    return f"{DUPLICATE_PREFIX}: identical to the later result; see there]"


def _digest(text: str) -> bytes:
    return xxhash.xxh3_128_digest(text.encode("utf-8", "surrogatepass"))


def shorten_arguments(arguments: str, leaf_chars: int = ARGUMENT_LEAF_CHARS) -> str | None:
    """Arguments with long string leaves cut, re-serialised; ``None`` if unparsable or unchanged."""
    try:
        value = bounded.loads(arguments)  # ``walk`` recurses per level: the depth is bounded
    except ValueError:  # invalid JSON, or too deep (bounded.TooDeepError): left as it is
        return None
    changed = False

    def walk(node: Any) -> Any:
        nonlocal changed
        if isinstance(node, str):
            if len(node) > leaf_chars:
                changed = True
                return node[:leaf_chars] + TRUNCATED_SUFFIX
            return node
        if isinstance(node, dict):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    try:
        shortened = walk(value)
    except RecursionError:
        return None
    if not changed:
        return None
    return json.dumps(shortened, ensure_ascii=False)


def _join(groups: dict[int, list[int]], rep: int, i: int) -> None:
    members = groups.get(rep)
    if members is None:
        groups[rep] = [rep, i]
    else:
        members.append(i)


def _reuses_ids(calls: Any) -> bool:
    seen = set()
    for call in calls:
        ident = (call.get("id") or call.get("call_id")) if type(call) is dict else None
        if ident in seen:
            return True
        seen.add(ident)
    return False


def _name_and_arguments(call: Any) -> tuple[str, Any]:
    """(name, arguments) of a call: a ``custom`` call's name and free-text input too."""
    _kind, name, arguments = tool_call_fields(call)
    return name or "unknown", arguments


def _strip_images(parts: list[Any], placeholder: str) -> tuple[list[Any], int]:
    out: list[Any] = []
    removed = 0
    for part in parts:
        if isinstance(part, dict) and part.get("type") in IMAGE_PART_TYPES:
            out.append({"type": "text", "text": placeholder})
            removed += 1
        else:
            out.append(part)
    return out, removed


def media_placeholder(part: Mapping[str, Any]) -> str:
    """The visible text that takes a media part's place: what it was, and that it was removed."""
    kind = part.get("type")
    if kind in IMAGE_PART_TYPES:
        return SCREENSHOT_PLACEHOLDER
    return f"[{kind} attachment removed to save context]"


def demote_parts(parts: list[Any], line: str) -> tuple[list[dict[str, Any]], int]:
    """A list-of-parts result reduced to its one-liner: ``line`` (which stands for all of its
    text parts) followed by a placeholder for each media part; ``(parts, media replaced)``.
    One text part: valid as a tool result for every provider shape."""
    notes = [media_placeholder(p) for p in parts if isinstance(p, Mapping) and p.get("type") in MEDIA_PART_TYPES]
    text = "\n".join([line, *notes])
    return [{"type": "text", "text": text}], len(notes)


def clip_content(content: Any, cap: int) -> tuple[Any, int]:
    """A tool result's content held to ``cap`` characters of text: a string clipped around a
    marker (``clip_terminal_output``: head and tail kept, the cut stated); a list of parts has
    each text part clipped to its share of ``cap``, media left. ``(content, characters cut)``;
    the same object when it fits."""
    if isinstance(content, str):
        if len(content) <= cap:
            return content, 0
        clipped = clip_terminal_output(content, cap)
        return clipped, len(content) - len(clipped)
    if not isinstance(content, list):
        return content, 0
    texts = [len(p["text"]) if _is_text(p) else 0 for p in content]
    total = sum(texts)
    if total <= cap:
        return content, 0
    out: list[Any] = []
    cut = 0
    for part, size in zip(content, texts):
        share = max(1_000, cap * size // total) if size else 0
        if size > share:
            clipped = clip_terminal_output(part["text"], share)
            cut += size - len(clipped)
            out.append({**part, "text": clipped})
        else:
            out.append(part)
    return out, cut


def _is_text(part: Any) -> bool:
    return isinstance(part, Mapping) and isinstance(part.get("text"), str) and part.get("type") in (None, "text", "input_text", "output_text")


def limit_oversized_results(
    messages: list[dict[str, Any]], cap: int
) -> tuple[list[dict[str, Any]], int, int]:
    """Every tool result over ``cap`` characters of text clipped to it, wherever it sits - the
    protected tail protects messages, not unlimited sizes (issue 28: a 50 MB result in a short
    history). ``(messages, results limited, characters cut)``; the same list when none was.
    A walk of the roles and string lengths only: cheap next to everything else a compaction
    does."""
    out: list[dict[str, Any]] | None = None
    limited = cut = 0
    for i, message in enumerate(messages):
        if message.get("role") != "tool":
            continue
        content = message.get("content")
        if type(content) is str:
            if len(content) <= cap:
                continue
        elif not isinstance(content, list):
            continue
        new, removed = clip_content(content, cap)
        if not removed:
            continue
        if out is None:
            out = list(messages)
        out[i] = {**message, "content": new}
        limited += 1
        cut += removed
    return (messages if out is None else out), limited, cut


class _Buckets:
    """The dedupe groups of string results, filled as ``_Pruner.run`` walks.

    Equal strings have equal lengths and equal samples, so results are bucketed by
    ``hash(content[32:64]) ^ len(content)`` (a sample from the start of the string, whose
    memory the length read has just brought in); within a bucket, a few distinct contents are
    told apart by direct comparison (it stops at the first differing character), and crowded
    buckets switch to xxh3-128 digests. Bucketing by length alone made the work grow faster
    than the history: over 100,000 messages most lengths are shared, and every comparison
    reads another cold string.
    """

    __slots__ = ("first_at", "groups", "messages", "others", "tables")

    def __init__(self, messages: Sequence[dict[str, Any]], groups: dict[int, list[int]]) -> None:
        self.messages = messages
        #: First index of a content -> every index holding that same content, in order.
        self.groups = groups
        # Per bucket: the index of its first content (an int, no tuple: at 100k messages every
        # allocation here lands in cold memory), further distinct contents, and the digest
        # table of a crowded bucket.
        self.first_at: dict[int, int] = {}
        self.others: dict[int, list[tuple[str, int]]] = {}
        self.tables: dict[int, dict[bytes, int]] = {}

    def add(self, bucket: int, first: int, content: str, i: int) -> None:
        """``content`` (at ``i``) falls in ``bucket``, whose first content is at ``first``
        (``run`` files the first content of a bucket itself: most results are alone in theirs)."""
        table = self.tables.get(bucket)
        if table is not None:
            key = _digest(content)
            found = table.get(key)
            if found is None:
                table[key] = i
            else:
                _join(self.groups, found, i)
        elif self.messages[first].get("content") == content:
            _join(self.groups, first, i)
        else:
            self._add_distinct(bucket, first, content, i)

    def _add_distinct(self, bucket: int, first: int, content: str, i: int) -> None:
        reps = self.others.get(bucket)
        if reps is None:
            self.others[bucket] = [(content, i)]
            return
        for other, rep in reps:
            if other == content:
                _join(self.groups, rep, i)
                return
        reps.append((content, i))
        if len(reps) >= _DIRECT_COMPARE_MAX:
            table = self.tables[bucket] = {_digest(self.messages[first]["content"]): first}
            for text, rep in reps:
                table[_digest(text)] = rep


class _OpenCalls:
    """The calls ``_Pruner.run``'s current run of results answers, and the long-argument
    check of old assistant messages done on the way.

    Whether an old assistant message has long arguments is checked on the fly: the look-up of
    each result's call checks that call, and when the next non-tool message comes, only the
    calls no result led to are left (``pending`` from ``verified`` on).
    """

    __slots__ = ("anchor", "boundary", "pending", "pending_at", "pruner", "verified")

    def __init__(self, pruner: _Pruner, boundary: int) -> None:
        self.pruner = pruner
        self.boundary = boundary
        #: Calls of the last non-tool message when it is an assistant's (else None).
        self.anchor: Any = None
        self.pending: list[Any] | None = None
        self.pending_at = 0
        self.verified = 0

    def close(self) -> None:
        """Check the calls of the pending assistant message no result led to."""
        pending = self.pending
        if pending is not None:
            if self.verified < len(pending):
                self.pruner._check_arguments(self.pending_at, pending, self.verified)
            self.pending = None

    def enter(self, i: int, message: dict[str, Any], role: Any) -> None:
        """A non-tool message at ``i``: a new run of results may follow it."""
        pending = self.pending
        if pending is not None:  # ``close`` inline: this runs once per assistant message
            if self.verified < len(pending):
                self.pruner._check_arguments(self.pending_at, pending, self.verified)
            self.pending = None
        if role != "assistant":
            self.anchor = None
            return
        self.anchor = calls = message.get("tool_calls")
        if calls and len(calls) > 1 and _reuses_ids(calls):
            # Parallel calls sharing an id: which result answers which call is the pairing
            # rule's business (``call_for``), not a scan for the first id.
            self.anchor = None
        if calls and i < self.boundary:
            if type(calls) is list:
                self.pending, self.pending_at, self.verified = calls, i, 0
            else:
                self.pruner._check_arguments(i, calls, 0)

    def call_of(self, ident: str) -> tuple[str, Any] | None:
        """(tool name, arguments) of the anchor's call with ``ident``; ``None`` if it has none.
        The call found is checked for long arguments on the way (see the class)."""
        if not self.anchor:
            return None
        k = 0
        for call in self.anchor:
            if type(call) is dict and (call.get("id") or call.get("call_id")) == ident:
                break
            k += 1  # noqa: SIM113 - cheaper than an enumerate object per result
        else:
            return None
        fn = call.get("function")
        if type(fn) is not dict:  # a custom call (its name and text input) or a malformed one
            if k == self.verified:
                self.verified = k + 1
            return _name_and_arguments(call)
        arguments = fn.get("arguments")
        if k == self.verified and self.pending is not None:
            if type(arguments) is str and len(arguments) > LONG_ARGUMENTS_CHARS:
                self.pruner.shrink_arguments_at(self.pending_at)
                self.pending = None
            else:
                self.verified = k + 1
        return fn.get("name") or "unknown", arguments


class _Pruner:
    """One run of the passes over one list; ``changed`` maps index -> replacement message.

    ``run`` is the hot path: a single forward pass that groups duplicates, demotes old results
    and shortens old arguments while each message is in cache, and builds the output list as
    it goes. The methods below it (``demote_at``, ``shrink_arguments_at``, ``call_for``) are the
    general, per-message forms, used for the rare cases and by the tail-pressure pass.
    """

    def __init__(self, messages: Sequence[dict[str, Any]], min_prune_chars: int) -> None:
        self.messages = messages
        self.min_prune_chars = min_prune_chars
        #: Index -> replacement, for every change but the demotions of ``run`` (see there).
        self.changed: dict[int, dict[str, Any]] = {}
        self.stats = PruneStats()
        #: First index of a content -> every index holding that same content, in order.
        self._groups: dict[int, list[int]] = {}
        self._answers: dict[int, Match] | None = None
        #: The newest assistant message when its calls are in flight (never rewritten), or -1.
        self.pending_at = -1
        #: The output list, once ``run`` has built it; later changes are written through.
        self._out: list[dict[str, Any]] | None = None
        #: Index -> (tool name, arguments) of a result whose one-liner ``run`` left to build
        #: (``None``: its call is looked up then); see ``PrunePlan``.
        self.planned: dict[int, tuple[str, Any] | None] = {}
        #: Indices of the results the output holds as one-liners (for the report's counts).
        self.demoted_at: set[int] = set()

    def _put(self, i: int, message: dict[str, Any]) -> None:
        self.changed[i] = message
        if self._out is not None:
            self._out[i] = message

    def run(self, boundary: int) -> None:
        """Dedupe everywhere; plan the demotion of results and shorten arguments before
        ``boundary``, in one forward walk (``_Buckets`` groups equal results, ``_OpenCalls``
        finds each result's call and checks old arguments on the way).

        A result's call is found as soon as the result is seen, with the calls of the
        assistant message right before its run of results (where it nearly always is). A line
        remembered from an earlier pass is written at once; a new one is only planned
        (``planned``: index -> call; ``None`` for a result whose call is elsewhere, looked up
        in the map of every call when needed), once the walk knows the older copies of later
        results: those become back-references and their lines are never built (each would
        cost a failure verdict, ~6 us). ``PrunePlan`` builds the planned lines it is asked for.
        """
        messages = self.messages
        min_chars = self.min_prune_chars
        remembered = remembered_tool_line
        copy = dict.copy
        sample = _SAMPLE
        buckets = _Buckets(messages, self._groups)
        first_at = buckets.first_at
        calls = _OpenCalls(self, boundary)
        # Copying the list is one C loop; the demotions below are written into it in place
        # (they are not entered in ``changed``: out[i] is not messages[i] says it).
        self._out = out = list(messages)
        #: Results to demote, planned once the walk is over: (index, tool name, arguments).
        todo: list[tuple[int, Any, Any]] = []
        far: list[int] = []
        lists: list[int] = []
        list_firsts: dict[str, int] = {}
        demoted = 0
        demoted_at = self.demoted_at
        for i, message in enumerate(messages):
            role = message.get("role")
            if role != "tool":
                # ``calls.enter`` inline for the usual user message: a call less per message.
                if role == "assistant" or calls.pending is not None:
                    calls.enter(i, message, role)
                else:
                    calls.anchor = None
                continue
            content = message.get("content")
            if type(content) is not str:
                self._walk_parts(i, content, boundary, list_firsts, lists)
                continue
            size = len(content)
            if size >= MIN_PRUNE_CHARS:
                bucket = hash(content[sample]) ^ size
                first = first_at.get(bucket)
                if first is None:
                    first_at[bucket] = i
                else:
                    buckets.add(bucket, first, content, i)
            if i >= boundary or size <= min_chars or (content[0] == "[" and looks_demoted(content)):
                continue
            found = calls.call_of(message.get("tool_call_id") or "")
            if found is None:
                far.append(i)
                continue
            line = remembered(found[0], found[1], content, message.get("_is_error"))
            if line is None:
                todo.append((i, found[0], found[1]))
            elif len(line) < size:
                # ``with_content`` inline (a call less per result of a later pass).
                demoted_message = copy(message) if type(message) is dict else {**message}
                demoted_message["content"] = line
                out[i] = demoted_message
                demoted_at.add(i)
                demoted += 1
        calls.close()
        self.stats.demoted += demoted - self._back_reference_duplicates()
        self._plan_rest(lists, todo, far)

    def _walk_parts(
        self, i: int, content: Any, boundary: int, list_firsts: dict[str, int], lists: list[int]
    ) -> None:
        """A result that is not a string, met by ``run``: a list of parts is deduped by its
        text and demoted once the walk knows which are older copies (``lists``)."""
        if type(content) is list:
            text = content_text(content)
            if len(text) >= MIN_PRUNE_CHARS:
                first = list_firsts.get(text)
                if first is None:
                    list_firsts[text] = i
                else:
                    _join(self._groups, first, i)
            if i < boundary:
                lists.append(i)
        elif content is not None and i < boundary:
            self.demote_at(i)

    def _back_reference_duplicates(self) -> int:
        """Older copies become back-references (their one-liners are never built); returns how
        many of them ``run`` had demoted already."""
        messages, out, changed = self.messages, self._out, self.changed
        assert out is not None
        undone = 0
        for members in self._groups.values():
            note = duplicate_note(str(messages[members[-1]].get("tool_call_id") or ""))
            for i in members[:-1]:
                if out[i] is not messages[i]:
                    undone += 1
                    self.demoted_at.discard(i)
                changed[i] = out[i] = {**messages[i], "content": note}
            self.stats.deduplicated += len(members) - 1
        return undone

    def _plan_rest(self, lists: list[int], todo: list[tuple[int, Any, Any]], far: list[int]) -> None:
        """Demote the list-of-parts results; leave the new one-liners to build (``PrunePlan``):
        most are never needed."""
        changed, planned = self.changed, self.planned
        for i in lists:
            if i not in changed:
                self.demote_at(i)
        for i, name, arguments in todo:
            if i not in changed:
                planned[i] = (name, arguments)
        for i in far:
            if i not in changed:
                planned[i] = None

    def _check_arguments(self, i: int, calls: Any, start: int) -> None:
        """Shorten the arguments at ``i`` if a call from ``start`` on has long ones."""
        for call in islice(calls, start, None):
            fn = call.get("function") if type(call) is dict else None
            if type(fn) is dict:
                arguments = fn.get("arguments")
                if type(arguments) is str and len(arguments) > LONG_ARGUMENTS_CHARS:
                    self.shrink_arguments_at(i)
                    return

    def call_for(self, i: int, ident: str) -> tuple[str, Any]:
        """(tool name, arguments) of the call the result at ``i`` answers.

        Results normally follow their assistant message directly, so the call is found by
        stepping back over the results before ``i`` when that message has one call with the
        id; otherwise (an id used twice there, a result far from its call) the pairing rule
        of ``hermes_core.pairing.match_results`` decides, computed once per run.
        """
        messages = self.messages
        j = i - 1
        while j >= 0 and messages[j].get("role") == "tool":
            j -= 1
        if j >= 0 and messages[j].get("role") == "assistant":
            found = [
                call for call in messages[j].get("tool_calls") or ()
                if type(call) is dict and (call.get("id") or call.get("call_id")) == ident
            ]
            if len(found) == 1:
                return _name_and_arguments(found[0])
        if self._answers is None:
            self._answers = match_results(messages)[0]
        match = self._answers.get(i)
        if match is None:
            return _UNKNOWN_CALL
        calls = messages[match[0]].get("tool_calls") or ()
        return _name_and_arguments(calls[match[1]]) if match[1] < len(calls) else _UNKNOWN_CALL

    def current(self, i: int) -> dict[str, Any]:
        if self._out is not None:
            return self._out[i]
        return self.changed.get(i) or self.messages[i]

    # --- passes 2 and 3 -----------------------------------------------------------------

    def demote_at(self, i: int) -> bool:
        """Replace the tool result at ``i`` by its one-line summary; True if it changed."""
        message = self.current(i)
        content = message.get("content")
        if type(content) is str:
            if len(content) <= self.min_prune_chars or looks_demoted(content):
                return False
            name, arguments = self.call_for(i, str(message.get("tool_call_id") or ""))
            line = summarize_tool_result(name, arguments, content, message.get("_is_error"))
            if len(line) >= len(content):
                return False
            self._put(i, {**message, "content": line})
            self.stats.demoted += 1
            self.demoted_at.add(i)
            return True
        if isinstance(content, list):
            text = content_text(content)
            if len(text) > self.min_prune_chars and not looks_demoted(text):
                # Text parts: one one-liner for all of them, as for a string result; media:
                # a visible placeholder each (``demote_parts``).
                name, arguments = self.call_for(i, str(message.get("tool_call_id") or ""))
                line = summarize_tool_result(name, arguments, text, message.get("_is_error"))
                if len(line) < len(text):
                    parts, removed = demote_parts(content, line)
                    self._put(i, {**message, "content": parts})
                    self.stats.demoted += 1
                    self.stats.media_stripped += removed
                    self.demoted_at.add(i)
                    return True
            parts, removed = _strip_images(content, SCREENSHOT_PLACEHOLDER)
            if not removed:
                return False
            self._put(i, {**message, "content": parts})
            self.stats.media_stripped += removed
            return True
        if isinstance(content, dict) and content.get("_multimodal"):
            summary = content.get("text_summary")
            text = "[screenshot removed] " + (summary[:200] if isinstance(summary, str) and summary
                                             else SCREENSHOT_PLACEHOLDER)
            self._put(i, {**message, "content": text})
            self.stats.media_stripped += 1
            return True
        return False

    def shrink_arguments_at(self, i: int) -> bool:
        """Shorten the long arguments of the assistant tool calls at ``i``; True if changed."""
        message = self.current(i)
        tool_calls = message.get("tool_calls")
        if not tool_calls:
            return False
        new_calls: list[Any] | None = None
        for j, call in enumerate(tool_calls):
            if not isinstance(call, dict):
                continue
            fn = call.get("function")
            if not isinstance(fn, dict):
                continue
            arguments = fn.get("arguments")
            if not isinstance(arguments, str) or len(arguments) <= LONG_ARGUMENTS_CHARS:
                continue
            shorter = shorten_arguments(arguments)
            if shorter is None or len(shorter) >= len(arguments):
                continue
            if new_calls is None:
                new_calls = list(tool_calls)
            new_calls[j] = {**call, "function": {**fn, "arguments": shorter}}
            self.stats.arguments_shortened += 1
        if new_calls is None:
            return False
        self._put(i, {**message, "tool_calls": new_calls})
        return True

    # --- pass 4 -------------------------------------------------------------------------

    def relieve_tail(self, boundary: int, budget: int) -> None:
        n = len(self.messages)
        ceiling = int(budget * SOFT_CEILING_FACTOR)
        sizes = {i: message_tokens(self.current(i)) for i in range(boundary, n)}
        total = sum(sizes.values())
        if total <= ceiling:
            return

        def shrink(i: int) -> None:
            nonlocal total
            if i == self.pending_at:
                return
            role = self.current(i).get("role")
            if role == "tool":
                done = self.demote_at(i)
            elif role == "assistant":
                done = self.shrink_arguments_at(i)
            else:
                done = False
            if done:
                after = message_tokens(self.current(i))
                total -= sizes[i] - after
                sizes[i] = after

        # Oldest first, sparing the most recent messages while that is enough.
        for i in range(boundary, n - PRESSURE_KEEP_RECENT):
            shrink(i)
            if total <= ceiling:
                return
        tools = [i for i in range(boundary, n) if self.messages[i].get("role") == "tool"]
        last_tool = tools[-1] if tools else -1
        for i in range(boundary, n):
            if i != last_tool:
                shrink(i)
        if total > ceiling and last_tool >= 0:
            shrink(last_tool)


def protected_tail_start(
    messages: Sequence[dict[str, Any]], protect_tail_count: int, protect_tail_tokens: int | None
) -> int:
    """Index where the protected tail starts: by token budget (with a message floor) or count."""
    n = len(messages)
    if not protect_tail_tokens or protect_tail_tokens <= 0:
        return max(0, n - protect_tail_count)
    floor = min(protect_tail_count, n, MAX_TAIL_MESSAGE_FLOOR)
    acc = 0
    protected = 0
    for i in range(n - 1, -1, -1):
        tokens = message_tokens(messages[i])
        protected += 1
        if protected > floor and acc + tokens > protect_tail_tokens:
            break  # the message that overflows still counts as protected
        acc += tokens
    return n - max(protected, floor)


def _plan(
    messages: list[dict[str, Any]], protect_tail_count: int, protect_tail_tokens: int | None,
    min_prune_chars: int, build_all: bool,
) -> PrunePlan:
    pruner = _Pruner(messages, min_prune_chars)
    boundary = protected_tail_start(messages, protect_tail_count, protect_tail_tokens)
    pending = pending_calls(messages)
    if pending:
        # Calls in flight are the host's next step: their message stays as it is.
        pruner.pending_at = pending[0][0]
        boundary = min(boundary, pruner.pending_at)
    pruner.run(boundary)
    if protect_tail_tokens and protect_tail_tokens > 0 and boundary < len(messages):
        pruner.relieve_tail(boundary, protect_tail_tokens)
    plan = PrunePlan(messages, pruner)
    if build_all:
        plan.materialize_all()
    return plan


def plan_free_passes(
    messages: list[dict[str, Any]],
    *,
    protect_tail_count: int,
    protect_tail_tokens: int | None = None,
    min_prune_chars: int = MIN_PRUNE_CHARS,
) -> PrunePlan:
    """The free passes of ``prune_tool_results`` with the new one-liners left to build on
    demand (``PrunePlan``); its ``materialize_all`` is ``prune_tool_results``' output."""
    if not messages:
        return PrunePlan(messages, _Pruner(messages, min_prune_chars))
    return _plan(messages, protect_tail_count, protect_tail_tokens, min_prune_chars, False)


def prune_tool_results(
    messages: list[dict[str, Any]],
    *,
    protect_tail_count: int,
    protect_tail_tokens: int | None = None,
    min_prune_chars: int = MIN_PRUNE_CHARS,
) -> tuple[list[dict[str, Any]], PruneStats]:
    """Run the free passes; returns ``(messages_or_new_list, stats)``: ``plan_free_passes``
    with every one-liner built.

    The very same list object comes back when nothing changed, so callers can test identity.
    """
    if not messages:
        return messages, PruneStats()
    plan = _plan(messages, protect_tail_count, protect_tail_tokens, min_prune_chars, True)
    return plan.materialize_all(), plan.stats

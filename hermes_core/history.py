"""``ProcessedHistory``: each message's processed form, computed once and reused while unchanged.

Per message: its canonical wire form, estimate (a running sum) and Anthropic blocks, so a turn
pays for the new messages. Unchanged means the same dict at the same place and, for the newest
``verify_window`` messages, the same shallow snapshot (docs/caching.md; edits further back need
``verify_window=None`` or ``clear()``). ``lend``/``settle`` let the layout skip a copy.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.conversion import ANTHROPIC_CONTENT, TOOL_RESULT_MARKER, merge_notes
from hermes_core.payload import canonical_message, user_breakpoints
from hermes_core.tokens import estimate_message_tokens
from hermes_core.wire import anthropic_blocks, openai_message, place_relocated
from hermes_core.wire_ids import IdRenamer, anthropic_ids, joins, renamed_blocks

__all__ = ["DEFAULT_VERIFY_WINDOW", "ProcessedHistory", "snapshot"]

#: Messages, counted from the end, whose content is re-checked on every turn.
DEFAULT_VERIFY_WINDOW = 64


def _flat(value: Any, out: list[Any]) -> None:
    if type(value) is dict:
        out.append(len(value))
        out.extend(value)
        out.extend(value.values())
    else:
        out.append(value)


def snapshot(message: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must stay equal for a processed form to be reused: the message's keys and values,
    and one level further for tool calls (with their ``function``) and content blocks.

    One flat tuple (with the lengths, so no two shapes flatten alike): one object per message,
    not one per item, keeps the cache small and the memory it touches compact.
    """
    calls = message.get("tool_calls")
    content = message.get("content")
    if type(calls) is not list and type(content) is not list:
        return (len(message), *message, *message.values())
    out: list[Any] = [len(message), *message, *message.values()]
    if type(calls) is list:
        out.append(len(calls))
        for call in calls:
            _flat(call, out)
            if type(call) is dict:
                _flat(call.get("function"), out)
    if type(content) is list:
        out.append(len(content))
        for block in content:
            _flat(block, out)
    return tuple(out)


def _same_ids(laid: Any, cached: Mapping[str, Any]) -> bool:
    """Whether a laid-out message can reuse the cached one's renamed ids and wire place: the
    same role, result id and calls (a layout's marked copy keeps them)."""
    if not isinstance(laid, Mapping):
        return False
    return (
        laid.get("role") == cached.get("role")
        and laid.get("tool_call_id") == cached.get("tool_call_id")
        and laid.get("tool_calls") == cached.get("tool_calls")
    )


def _forget_notes(notes: dict[int, dict[str, int]], total: dict[str, int], k: int) -> None:
    """Remove the notes of messages ``k`` and later from ``notes`` and from their sum."""
    for i in [i for i in notes if i >= k]:
        for key, count in notes.pop(i).items():
            left = total[key] - count
            if left:
                total[key] = left
            else:
                del total[key]


class ProcessedHistory:
    """One session's processed messages (see the module docstring). Not thread-safe on its own:
    the ``Session`` serialises calls."""

    def __init__(self, verify_window: int | None = DEFAULT_VERIFY_WINDOW) -> None:
        self.verify_window = verify_window
        self.clear()

    def clear(self) -> None:
        """Forget every processed form (the next turn processes the whole history again)."""
        self.src: list[Any] = []
        # The lowest index (re)processed since ``take_low_water`` (counters kept per message
        # by the Session, such as hermes_core.responses.LeftOutCounter, redo only from there).
        self._low_water = 0
        self.snaps: list[Any] = []
        self.canon: list[Any] = []
        self.cum: list[int] = [0]
        # Anthropic, built lazily up to ``len(self.aids)`` messages.
        self.aids: list[Any] = []  # renamed ids per message (see ``anthropic_ids``)
        self.aundo: list[Any] = []  # the renamer's undo log per message
        self.ablocks: list[Any] = []  # content blocks per message (renamed, unmarked)
        self.awire_of: list[int] = []  # wire index per message (-1: no blocks, skipped)
        self.wire: list[dict[str, Any]] = []
        self.wire_first: list[int] = []  # first message index of each wire message
        # What converting a message for Anthropic changed (``hermes_core.conversion`` notes),
        # by message index, only for the messages where it changed something; and their sum.
        self.anotes: dict[int, dict[str, int]] = {}
        self.anote_total: dict[str, int] = {}
        # The history's own cache markers on content blocks, by message index, and their sum.
        self.umarks: dict[int, int] = {}
        # OpenAI Chat, built lazily up to ``len(self.owire)`` messages: one wire message per
        # canonical message, its conversion notes (sparse) and their sum, and the
        # ``keep_markers`` setting they were built with.
        self.owire: list[Any] = []
        self.onotes: dict[int, dict[str, int]] = {}
        self.onote_total: dict[str, int] = {}
        self.orelocated: dict[int, list[Any]] = {}  # tool results' images, for a user message
        self.okeep = False
        self.umark_total = 0
        self.renamer = IdRenamer()
        # Whether the host's list held only plain OpenAI-format dicts when last normalised
        # (then normalising gave back the host's own list, and ``src`` mirrors it).
        self.raw_plain = False
        # What ``normalized`` proved for the ``sync`` of the same Session call: (list, length,
        # identical prefix, version, thread); ``version`` counts changes of ``src``.
        self._proof: tuple[Any, int, int, int, int] | None = None
        self._version = getattr(self, "_version", 0) + 1
        self._base: list[Any] | None = None  # the list ``sync_prefix`` reads prefixes of
        # The list a request lends to the layout hook (``lend``): canon's items except at
        # ``_spare_marks``; kept between requests so a layout marks in place, without a copy.
        self._spare: list[Any] | None = None
        self._spare_marks: list[int] = []
        self._lent: list[Any] | None = None  # the one lent list that may come back
        self._lent_marks: list[int] | None = None
        #: Counters for tests and benchmarks: messages processed, syncs that rewound past old ones.
        self.computed = 0
        self.rewinds = 0

    # --- keeping up with the host's list --------------------------------------------------

    def sync(self, messages: Sequence[Mapping[str, Any]]) -> None:
        """Make the cache describe ``messages``: reuse what is unchanged, process the rest."""
        msgs = messages if type(messages) is list else list(messages)
        self._base = None
        src = self.src
        m = len(src)
        n = len(msgs)
        proof, self._proof = self._proof, None
        if (proof is not None and proof[0] is msgs and proof[1] == n and proof[3] == self._version
                and proof[4] == threading.get_ident()):
            k = proof[2]  # ``normalized`` compared this very list a moment ago, in this call
        else:
            k = self._identical_prefix(msgs)
        window = self.verify_window
        snaps = self.snaps
        for i in range(0 if window is None else max(0, k - window), k):
            if snapshot(msgs[i]) != snaps[i]:
                k = i
                break
        if k == m == n:
            return
        self._rewind(k, msgs)

    def sync_prefix(self, base: list[Any], end: int, *, consume: bool = False) -> None:
        """``sync(base[:end])`` for a list that only grows (a transcript replayed request by
        request): when the last call read a shorter prefix of the same list, only the messages
        after it are processed, without comparing or copying the rest.

        ``consume=True`` puts each message's canonical form into ``base`` in its place, so a
        replay does not hold every message twice (raw and canonical).
        """
        m = len(self.src)
        if self._base is base and end >= m:
            if end > m:
                self._rewind(m, base, end)
        else:
            self.sync(base[:end])
            self._base = base
            m = 0
        if consume:
            src, canon = self.src, self.canon
            for i in range(m, end):
                form = canon[i]
                if form is not base[i]:
                    base[i] = src[i] = form

    def _identical_prefix(self, msgs: list[Any]) -> int:
        """How many leading messages of ``msgs`` are the synced ones (by identity)."""
        src = self.src
        m = len(src)
        n = len(msgs)
        if n < m:
            return self._first_mismatch(msgs, n)
        # Identity of the whole known prefix in one pointer comparison, without a slice copy
        # of the history: extend with the new tail, compare, cut back.
        if n > m:
            src.extend(msgs[m:])
        same = src == msgs
        if n > m:
            del src[m:]
        return m if same else self._first_mismatch(msgs, m)

    def take_low_water(self) -> int:
        """How many leading synced messages no sync has (re)processed since the last call (all
        of them on the first call: 0); the mark starts again from the current length."""
        low, self._low_water = self._low_water, len(self.src)
        return low

    @property
    def version(self) -> int:
        """Counts the changes of the synced messages (a sync that processed or rewound)."""
        return self._version

    def forget_proof(self) -> None:
        """End of a Session call: what ``normalized`` proved no longer holds (the host may
        change its list before the next call)."""
        self._proof = None

    def _first_mismatch(self, messages: Sequence[Any], limit: int) -> int:
        src = self.src
        for i in range(limit):
            if src[i] is not messages[i]:
                return i
        return limit

    def _rewind(self, k: int, messages: list[Mapping[str, Any]], end: int | None = None) -> None:
        """Keep the first ``k`` entries, then (re)process ``messages[k:]``, reusing the forms
        of messages that only moved (looked up by identity, checked by snapshot)."""
        src, snaps, canon, cum = self.src, self.snaps, self.canon, self.cum
        m = len(src)
        moved: dict[int, int] = {}
        self._version += 1
        if k < self._low_water:
            self._low_water = k
        if k < m:
            self.rewinds += 1
            old = (src[k:], snaps[k:], canon[k:], cum[k:])
            for j, message in enumerate(old[0]):
                moved[id(message)] = j
            del src[k:], snaps[k:], canon[k:], cum[k + 1:]
            self._forget_laid(k)
            for i in [i for i in self.umarks if i >= k]:
                self.umark_total -= self.umarks.pop(i)
        self._truncate_anthropic(k)
        self._truncate_openai(k)
        total = cum[-1]
        processed = 0
        check = self.verify_window != 0  # 0: identity alone decides, keep no snapshots
        for i in range(k, len(messages) if end is None else end):
            message = messages[i]
            snap = snapshot(message) if check else None
            j = moved.get(id(message), -1)
            if j >= 0 and old[0][j] is message and old[1][j] == snap:
                form = old[2][j]
                tokens = old[3][j + 1] - old[3][j]
            else:
                form = canonical_message(message)
                tokens = estimate_message_tokens(message)
                processed += 1
            if type(form.get("content")) is list or TOOL_RESULT_MARKER in form or ANTHROPIC_CONTENT in form:
                marks = user_breakpoints(form)
                if marks:
                    self.umarks[i] = marks
                    self.umark_total += marks
            src.append(message)
            snaps.append(snap)
            canon.append(form)
            total += tokens
            cum.append(total)
        self.computed += processed

    def normalized(self, messages: Sequence[Any], normalize: Any, *, prove: bool = False,
                   check: Any = None) -> list[Any]:
        """``normalize(messages)`` (``hermes_core.sdk.normalize_messages``), looking only at the
        messages after the synced prefix (and the newest ``verify_window`` of it).

        The synced messages are canonical dicts (``sync`` takes normalised lists only, and
        normalising a canonical dict gives it back), so the prefix they share with
        ``messages`` by identity needs no second look - also when the host's list holds SDK
        objects or Anthropic-shaped dicts after it (a host that appends the SDK's reply and its
        tool results as they came). ``prove=True`` (a Session call that syncs next): when the
        host's list comes back as it is, the ``sync`` of this call reuses that comparison
        instead of repeating it; the Session calls ``forget_proof`` when its call ends.
        ``check(normalised, start)`` sees the messages looked at (``start``: the first one's index).
        """
        msgs = messages if type(messages) is list else list(messages)
        if not self.src:
            out = normalize(msgs)
            if check is not None:
                check(out, 0)
            self.raw_plain = out is msgs
            return out  # type: ignore[no-any-return]
        k = self._identical_prefix(msgs)
        window = self.verify_window
        start = 0 if window is None else max(0, k - window)
        tail = msgs[start:]
        done = normalize(tail)
        if check is not None:
            check(done, start)
        if done is tail:
            self.raw_plain = True
            if prove:
                self._proof = (msgs, len(msgs), k, self._version, threading.get_ident())
            return msgs
        self.raw_plain = False
        return msgs[:start] + done  # type: ignore[no-any-return]

    # --- the laid-out list a request lends to the layout -------------------------------------

    def _forget_laid(self, k: int) -> None:
        # canon[k:] changed: the spare's items there are stale, a lent list cannot come back.
        spare = self._spare
        if spare is not None and len(spare) > k:
            del spare[k:]
        self._lent = self._lent_marks = None

    def lend(self) -> list[Any]:
        """A list equal to the synced canonical messages that the caller may set items of (the
        layout marks breakpoints in place): the spare list of the previous request brought up
        to date (its marks undone, the new messages appended: O(new)), or a copy when there is
        none or it is still out (another thread's request). Give it back with ``settle`` and
        ``release``."""
        canon = self.canon
        if self._lent is not None:
            return list(canon)
        spare = self._spare
        self._spare = None
        if spare is None:
            spare = list(canon)
        else:
            n = len(canon)
            if len(spare) > n:
                del spare[n:]
            for i in self._spare_marks:
                if i < len(spare):
                    spare[i] = canon[i]
            if len(spare) < n:
                spare.extend(canon[len(spare):])
        self._spare_marks = []
        self._lent = spare
        self._lent_marks = None
        return spare

    def settle(self, lent: list[Any], laid_out: Any) -> list[int] | None:
        """After the layout: the indices at which ``laid_out`` (the messages it returned) holds
        other objects than the canonical messages, or ``None`` when that is not only near the
        end (then the caller converts from scratch). Records whether ``lent`` can be reused."""
        marks = self.marks_of(laid_out)
        if lent is self._lent:
            if laid_out is lent:
                self._lent_marks = marks
            else:  # the layout made its own list: reuse ours only if it is untouched
                self._lent_marks = [] if lent == self.canon else None
        return marks

    def release(self, lent: Any, *, reuse: bool = True) -> None:
        """The lent list is no longer read (its payload is converted): keep it for the next
        request when its marks are known (and ``reuse``: not after a failed layout)."""
        if lent is not None and lent is self._lent:
            if reuse and self._lent_marks is not None:
                self._spare, self._spare_marks = lent, self._lent_marks
            self._lent = self._lent_marks = None

    def marks_of(self, laid_out: Any) -> list[int] | None:
        """The indices where ``laid_out`` differs (by identity) from the canonical messages,
        all within the last ``4 x (DEFAULT_VERIFY_WINDOW + 64)``; ``None`` otherwise. The rest
        is proven identical with one pointer comparison of the two lists, no copy: canon is
        patched with the changed items for the moment of the comparison."""
        canon = self.canon
        n = len(canon)
        if type(laid_out) is not list or len(laid_out) != n:
            return None
        changed: list[int] = []
        for i in range(n - 1, max(-1, n - 1 - 4 * (DEFAULT_VERIFY_WINDOW + 64)), -1):
            if laid_out[i] is not canon[i]:
                changed.append(i)
        if not changed:
            return changed if laid_out == canon else None
        saved = [canon[i] for i in changed]
        for i in changed:
            canon[i] = laid_out[i]
        try:
            same = laid_out == canon
        finally:
            for i, original in zip(changed, saved):
                canon[i] = original
        return changed if same else None

    # --- what a turn reads ----------------------------------------------------------------

    def message_tokens(self) -> int:
        """Rough tokens of the synced messages (sum of ``estimate_message_tokens``)."""
        return self.cum[-1]

    # --- OpenAI Chat ----------------------------------------------------------------------

    def _truncate_openai(self, k: int) -> None:
        if len(self.owire) > k:
            del self.owire[k:]
            _forget_notes(self.onotes, self.onote_total, k)
            for i in [i for i in self.orelocated if i >= k]:
                del self.orelocated[i]

    def openai_messages(
        self, laid_out: list[Any], marks: list[int] | None = None,
        notes: dict[str, int] | None = None, *, keep_markers: bool = False, head: Sequence[Any] = (),
    ) -> list[Any] | None:
        """The OpenAI Chat ``messages`` of a laid-out payload whose messages are the synced
        canonical ones except for a few marked near the end, after ``head`` (the system
        message); ``None`` when they are not. Each message is converted once while it is
        unchanged; what the conversions changed in the whole history is added to ``notes``."""
        n = len(self.canon)
        changed = marks if marks is not None and len(laid_out) == n else self.marks_of(laid_out)
        if changed is None:
            return None
        if keep_markers != self.okeep:
            self._truncate_openai(0)
            self.okeep = keep_markers
        canon, wire = self.canon, self.owire
        for i in range(len(wire), n):
            found: dict[str, int] = {}
            images: list[Any] = []
            wire.append(openai_message(canon[i], found, keep_markers=keep_markers, relocated=images))
            if found:
                self.onotes[i] = found
                merge_notes(self.onote_total, found)
            if images:
                self.orelocated[i] = images
        out = [*head, *wire]  # the one copy: the SDK arguments' list, the host's to keep
        start = len(head)
        for i in changed:
            out[start + i] = openai_message(laid_out[i], None, keep_markers=keep_markers, relocated=[])
        if notes is not None:
            merge_notes(notes, self.onote_total)
        return place_relocated(out, self.orelocated, start)

    # --- Anthropic ------------------------------------------------------------------------

    def _truncate_anthropic(self, k: int) -> None:
        if len(self.aids) > k:
            for i in range(len(self.aids) - 1, k - 1, -1):
                self.renamer.undo(self.aundo[i])
            del self.aids[k:], self.aundo[k:], self.ablocks[k:]
            _forget_notes(self.anotes, self.anote_total, k)
        if len(self.awire_of) <= k:
            return
        # Cut the wire before the wire message of the last message before k that has blocks
        # (message k may have extended it: consecutive same-role messages share one) and place
        # its messages again.
        keep_msgs = wire_cut = 0
        for p in range(k - 1, -1, -1):
            w = self.awire_of[p]
            if w >= 0:
                wire_cut, keep_msgs = w, self.wire_first[w]
                break
        del self.wire[wire_cut:], self.wire_first[wire_cut:], self.awire_of[keep_msgs:]

    def _extend_anthropic(self) -> None:
        """Blocks and wire messages for every canonical message not yet converted."""
        canon = self.canon
        for i in range(len(self.aids), len(canon)):
            message = canon[i]
            ids, undo = anthropic_ids(message, i, self.renamer)
            self.aids.append(ids)
            self.aundo.append(undo)
            notes: dict[str, int] = {}
            self.ablocks.append(renamed_blocks(anthropic_blocks(message, notes), ids))
            if notes:
                self.anotes[i] = notes
                merge_notes(self.anote_total, notes)
        for i in range(len(self.awire_of), len(canon)):
            self._place(i, canon[i], self.ablocks[i])

    def _place(self, i: int, message: Mapping[str, Any], blocks: list[dict[str, Any]]) -> None:
        wire = self.wire
        if not blocks:
            self.awire_of.append(-1)
            return
        role = message.get("role")
        if wire and joins(wire[-1], role):
            last = wire[-1]
            wire[-1] = {"role": last["role"], "content": [*last["content"], *blocks]}
            self.awire_of.append(len(wire) - 1)
            return
        wire.append({"role": "assistant" if role == "assistant" else "user", "content": list(blocks)})
        self.wire_first.append(i)
        self.awire_of.append(len(wire) - 1)

    def anthropic_messages(
        self, laid_out: list[Any], marks: list[int] | None = None,
        notes: dict[str, int] | None = None,
    ) -> list[dict[str, Any]] | None:
        """The Anthropic ``messages`` of a laid-out payload whose messages are the synced
        canonical ones except for a few marked near the end; ``None`` when they are not.
        ``marks``: those indices when the caller already knows them (``settle``). What the
        conversion changed in the whole history is added to ``notes``."""
        n = len(self.canon)
        changed = marks if marks is not None and len(laid_out) == n else self.marks_of(laid_out)
        if changed is None:
            return None
        self._extend_anthropic()
        canon = self.canon
        patched: dict[int, list[int]] = {}
        for i in changed:
            if not _same_ids(laid_out[i], canon[i]):
                return None  # not a marked copy of the cached message: its renamed ids differ
            w = self.awire_of[i]
            if w < 0:
                return None  # an empty message gained blocks: not a layout's doing
            patched.setdefault(w, []).append(i)
        out = list(self.wire)  # the one copy: the SDK arguments' list, the host's to keep
        for w, indices in patched.items():
            end = self.wire_first[w + 1] if w + 1 < len(self.wire_first) else n
            content: list[dict[str, Any]] = []
            for i in range(self.wire_first[w], end):
                if self.awire_of[i] != w:
                    continue
                if i in indices:
                    content.extend(renamed_blocks(anthropic_blocks(laid_out[i]), self.aids[i]))
                else:
                    content.extend(self.ablocks[i])
            out[w] = {"role": self.wire[w]["role"], "content": content}
        if notes is not None:
            merge_notes(notes, self.anote_total)
        return out

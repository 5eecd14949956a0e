"""``SessionArchive``: one Session's archive of what its compactions removed or rewrote.

The ``archive`` plugin hands it, once per compaction (``hermes_session_compacted``), the list the
engine got and the list it returned. It diffs the two (``diff``: identity first, a content hash
for an engine that copies), stores every message that left or was rewritten - the original -
under a reference unique in the session (``m<turn>.<n>``) and marks each replacement with the
references it stands for, as text (``[ref m41.3]``) and ``_ref`` / ``_refs`` metadata, so the
model can ask for the original through ``context_search`` / ``context_expand``.

Storage is the session store's when it has the ``archive_*`` methods (SQLite, Redis), else
memory (``MemoryArchiveStore``); a batch a failing store refuses is held in memory and written
later. Every text is redacted with the session's ``Redactor`` when the batch is built, off the
request path (``archive.keep_secrets: true``, unsafe, stores it verbatim); see docs/recall.md.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import operator
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from hermes_core.plugin import REF_KEY, REFS_KEY, Redactor, StoreError, get_logger, record_warning
from hermes_plugins.archive.batch import ArchivedBatch
from hermes_plugins.archive.diff import _EARLIER, _scan, replacement_runs
from hermes_plugins.archive.memory_store import MemoryArchiveStore, has_archive
from hermes_plugins.archive.search import ArchiveError, parse_ref, query_words

log = get_logger("hermes_plugins.archive")

#: At most this many references are spelled out in a replacement's text.
MAX_REFS_IN_TEXT = 6
#: The sentence the summary's framing gains when the recall tools can answer.
TOOLS_SENTENCE = (
    "The full text of everything summarised or shortened here is archived: call "
    "context_search(query) to find it and context_expand(ref) to read an original."
)
#: The tools a store-backed archive makes available to the model.
RECALL_TOOLS = ("context_search", "context_expand")


class SessionArchive:
    """One Session's archive: records compactions, searches and expands by reference."""

    def __init__(
        self, *, session_id: str, store: Any, enabled: bool = True, tools: bool = True,
        keep_secrets: bool = False, redactor: Redactor | None = None,
    ) -> None:
        self.session_id = session_id
        #: Masks secrets in what is stored (``None`` with ``keep_secrets``: verbatim, unsafe).
        self.redactor = None if keep_secrets else (redactor or Redactor.for_session())
        self._warned_masked = 0
        self.persistent = has_archive(store)
        self.store = store if self.persistent else MemoryArchiveStore()
        self.enabled = enabled
        #: Whether the recall tools answer for this session (the summary sentence says so).
        self.tools = tools
        self._lock = threading.RLock()
        self._used: set[str] | None = None
        # References handed out but not yet hashed into ``_used``: the next compaction that
        # has to test its references against the taken ones adds them (``_taken``); a session
        # that compacts once never hashes its ~100k references into a set it never reads.
        self._unhashed: list[Sequence[str]] = []
        self._turn_offset: int | None = None
        self._seq = 0
        self._count = 0
        self._pending_turns = 0
        self._carried_to: set[int] = set()
        # Batches the store refused (down, slow, full): kept in memory so recall keeps working
        # in this process, and written to the store again at the next compaction or read.
        self._held: MemoryArchiveStore | None = None
        self._held_batches: list[Any] = []

    # -- state restored from the store (a new process, the same session id)

    def _load(self) -> None:
        if self._used is not None:
            return
        try:
            self._used = set(self.store.archive_refs(self.session_id))
            stats = self.store.archive_stats(self.session_id)
        except Exception as exc:  # noqa: BLE001 - a broken store costs the resume, not the turn
            record_warning(
                "archive_read_failed",
                f"could not read the archive of session {self.session_id}: {type(exc).__name__}: {exc}",
                session_id=self.session_id,
            )
            self._used, stats = set(), {}
        self._count = int(stats.get("count") or len(self._used))
        # After a prune the count falls below the newest sequence number: continuing from the
        # count would give new entries numbers older ones still hold (an index that tops up
        # "entries after the last one seen", like Redis's, would then never see them).
        self._seq = max(self._count, int(stats.get("max_seq") or 0))
        self._turn_offset = int(stats.get("turns") or 0)

    def _taken(self) -> set[str]:
        """Every reference taken in this session (the store's and this process's)."""
        assert self._used is not None
        for refs in self._unhashed:
            self._used.update(refs)
        self._unhashed = []
        return self._used

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return self._count

    def has_entries(self) -> bool:
        """Whether anything of this session is archived (the recall tools are offered then).

        Asked on every tool assembly, so it takes no lock once the archive is loaded: it then
        reads one int, ``_count``, which after ``_load`` only grows (``+=`` under the lock in
        ``record``). Reading an attribute is atomic, so a reader racing a compaction sees the
        count before or after it, both true at some moment of the race, and ``> 0`` never
        turns false again. ``_turn_offset`` is set last in ``_load``: not ``None`` means
        ``_count`` already holds the loaded count."""
        if self._turn_offset is not None:
            return self._count > 0
        return len(self) > 0

    # -- recording

    def record(
        self, before: list[dict[str, Any]], after: list[dict[str, Any]], *, phase: str = "",
        scan: Any = None,
    ) -> list[dict[str, Any]]:
        """Archive what ``after`` no longer holds of ``before``; ``after`` with its replacements
        marked (a new list; the engine's list and dicts are left alone). ``scan``: the
        ``HistoryScan`` of ``before`` when the caller's pass read it (``ContextEngine.input_scan``)."""
        if not self.enabled or after is before:
            return after
        started = time.perf_counter()
        with self._lock:
            self._load()
            kept, tags, contents, call_ids, odd, summaries = _scan(before, after, scan)
            if len(after) == len(before) and -1 not in kept:
                return after
            runs = replacement_runs(before, after, kept, call_ids)
            records, refs_for = self._records(before, kept, runs, tags, contents, call_ids, odd, summaries)
            if records:
                self._retry_held()
                if self._held_batches:  # the store is still refusing: keep the order of batches
                    self._hold(records, None)
                else:
                    try:
                        self.store.archive_put(self.session_id, records)
                    except Exception as exc:  # noqa: BLE001 - the compaction stands: fit comes first
                        self._hold(records, exc)
                self._count += len(records)
            self._turn_offset += self._pending_turns  # type: ignore[operator]
            self.warn_masked()
            out = self._annotate(after, refs_for)
        log.info(
            "messages_archived", session=self.session_id, archived=len(records), phase=phase or None,
            replacements=len(refs_for), ms=round((time.perf_counter() - started) * 1000, 2),
        )
        return out

    def _records(
        self, before: Sequence[dict[str, Any]], kept: Sequence[int],
        runs: Sequence[tuple[int, int, int | list[int]]], tags: list[Any], contents: Mapping[int, Any],
        call_ids: Mapping[int, Any], odd: Mapping[int, dict[str, Any]], summaries: set[int] | None = None,
    ) -> tuple[ArchivedBatch, dict[int, list[str]]]:
        """The batch of what left (references and snapshots only) and, per replacement in
        ``after``, the references it stands for (in the order of ``before``).

        No record dict is built here: that (text, extra, columns) is the batch's, on the store's
        writer thread or at the first read. What is left works on what ``_scan`` read of each
        message in one pass and on lists of ints in C (``map``,
        ``accumulate``): a reference is ``m<turn>.<n>``, ``n`` the message's place in its user
        turn. Only when a reference is taken already (a resumed session, the turn of an earlier
        summary) are they named one message at a time, bumping past the taken ones.
        """
        assert self._used is not None and self._turn_offset is not None
        size = len(before)
        users = itertools.compress(itertools.count(), map(operator.eq, tags, itertools.repeat("user")))
        # A "user" tag is a user message without a reference: ``_is_turn_start`` less what the
        # tag already says, inline (15k calls at 100k messages).
        if summaries is None:
            starts = [j for j in users if not ((m := before[j]).get("_summary") or m.get("_compressed_summary"))]
        else:
            starts = [j for j in users if j not in summaries] if summaries else list(users)
        gone = list(itertools.compress(range(size), map(operator.lt, kept, itertools.repeat(0))))
        earlier = list(itertools.compress(gone, map(operator.is_, map(tags.__getitem__, gone), itertools.repeat(_EARLIER)))) \
            if any(map(operator.is_, tags, itertools.repeat(_EARLIER))) else []
        if earlier:
            skip = set(earlier)
            gone = [j for j in gone if j not in skip]
        # Per position: its turn (the starts so far) and the position of its turn's start (0
        # before the first start, where n counts from 1 at index 0 too).
        flags = [0] * size
        steps = [0] * size
        # flags[j] = 1 and steps[j] = j - the previous start, at each start j (in C).
        collections.deque(map(flags.__setitem__, starts, itertools.repeat(1)), maxlen=0)
        collections.deque(map(steps.__setitem__, starts, map(operator.sub, starts, itertools.chain((0,), starts))),
                          maxlen=0)
        turn_of = list(itertools.accumulate(flags, initial=self._turn_offset))[1:]
        start_of = list(itertools.accumulate(steps))
        turns = list(map(turn_of.__getitem__, gone))
        places = list(map(operator.sub, map((1).__add__, gone), map(start_of.__getitem__, gone)))
        refs = self._name(turns, places)
        target_of = _targets_by_position(runs, size)
        targets = list(map(target_of.__getitem__, gone))
        refs_for: dict[int, list[str]] = {}

        def group(lo: int, hi: int) -> None:
            at = lo
            for target, run in itertools.groupby(targets[lo:hi]):
                count = len(list(run))
                if target >= 0:
                    refs_for.setdefault(target, []).extend(refs[at:at + count])
                at += count

        self._carried_to = set()
        done = 0
        for j in earlier:  # replacements from earlier compactions: their originals are archived
            upto = bisect.bisect_left(gone, j)
            group(done, upto)
            done = upto
            if target_of[j] >= 0:
                self._carried_to.add(target_of[j])
                message = before[j]
                refs_for.setdefault(target_of[j], []).extend(message.get(REFS_KEY) or (message[REF_KEY],))
        group(done, len(gone))
        self._pending_turns = list(map(kept.__getitem__, starts)).count(-1)
        batch = ArchivedBatch(
            odd=odd, contents=contents, roles=tags, call_ids=call_ids, positions=gone, refs=refs, turns=turns,
            targets=targets, starts=starts, first_seq=self._seq + 1, created_at=time.time(),
            redactor=self.redactor,
        )
        self._seq += len(refs)
        return batch, refs_for

    def _name(self, turns: list[int], places: list[int]) -> list[str]:
        """``m<turn>.<place>`` per archived message, bumped past the references already taken."""
        assert self._used is not None
        refs = [f"m{turn}.{place}" for turn, place in zip(turns, places)]
        if not self._used and not self._unhashed:
            self._unhashed.append(refs)  # nothing taken yet: no set to test them against
        elif (used := self._taken()).isdisjoint(refs):
            self._unhashed.append(refs)
        else:
            for i, (turn, place) in enumerate(zip(turns, places)):
                ref = refs[i]
                while ref in used:
                    place += 1
                    ref = f"m{turn}.{place}"
                used.add(ref)
                refs[i] = ref
        return refs

    def _annotate(self, after: list[dict[str, Any]], refs_for: Mapping[int, list[str]]) -> list[dict[str, Any]]:
        if not refs_for:
            return after
        out = list(after)
        for i, refs in refs_for.items():
            if i in self._carried_to:  # only refs carried from earlier replacements can repeat
                refs = list(dict.fromkeys(refs))
            message = dict(out[i])
            message[REF_KEY] = refs[0]
            if len(refs) > 1:
                message[REFS_KEY] = tuple(refs)
            mark = _mark(refs)
            if len(refs) > 1 and self.tools:
                mark += " " + TOOLS_SENTENCE
            content = message.get("content")
            if message.get("role") == "system":
                pass  # the system text is the prompt's: the reference is metadata only
            elif isinstance(content, str):
                if message.get("role") == "assistant" and message.get("tool_calls") and not content:
                    pass  # only the call arguments were shortened: the reference is metadata
                else:
                    message["content"] = (content + ("\n" if "\n" in content else " ") + mark) if content else mark
            elif isinstance(content, list):
                message["content"] = [*content, {"type": "text", "text": mark}]
            out[i] = message
        return out

    # -- reading (the host API: original text)

    def _hold(self, records: Any, error: BaseException | None) -> None:
        """Keep a batch the store refused in memory (one warning per outage)."""
        if self._held is None:
            self._held = MemoryArchiveStore()
        if error is not None and not self._held_batches:
            record_warning(
                "archive_write_deferred",
                f"could not archive {len(records)} compacted message(s) of session {self.session_id} "
                f"({type(error).__name__}: {error}); they are kept in memory, recall still finds "
                "them in this process, and they are written to the store when it answers again",
                session_id=self.session_id,
            )
        self._held.archive_put(self.session_id, records)
        self._held_batches.append(records)

    def _retry_held(self) -> None:
        """Write the held batches to the store, oldest first, until it refuses one."""
        while self._held_batches:
            try:
                self.store.archive_put(self.session_id, self._held_batches[0])
            except Exception:  # noqa: BLE001 - still down: kept, tried again later
                return
            self._held_batches.pop(0)
        if self._held is not None:
            log.info("archive_write_recovered", session=self.session_id)
            self._held = None

    @property
    def held(self) -> int:
        """Batches kept in memory because the store refused them (0 when all are stored)."""
        return len(self._held_batches)

    def flush(self) -> None:
        """Wait until everything archived is in the store; ``StoreError`` when the store
        still refuses batches held in memory (they stay held: a later flush tries again)."""
        with self._lock:
            self._retry_held()
            held = len(self._held_batches)
        flush = getattr(self.store, "archive_flush", None)
        if callable(flush):
            flush()
        self.warn_masked()
        if held:
            raise StoreError(
                f"{held} archived batch(es) of session {self.session_id} are held in memory: the "
                "session store still refuses them (recall finds them in this process only)",
            )

    def close(self) -> None:
        """``flush`` at ``Session.close``: a store that still refuses is one warning, not an error."""
        try:
            self.flush()
        except Exception as exc:  # noqa: BLE001 - reported, the session still closes
            record_warning(
                "archive_write_failed",
                f"the archive of session {self.session_id} could not be written: {type(exc).__name__}: {exc}",
                session_id=self.session_id,
            )

    def masked(self) -> dict[str, int]:
        """How many secrets were masked in what this archive stored, by family."""
        return self.redactor.counts() if self.redactor is not None else {}

    def warn_masked(self) -> None:
        """One ``secrets_masked_in_archive`` warning per session, once something was masked
        (a batch is built on the store's writer thread: seen here at the next compaction or
        flush); later ones are counted in ``masked()`` and the ``archive_secrets_masked`` log
        events."""
        if self._warned_masked:
            return
        counts = self.masked()
        total = sum(counts.values())
        if not total:
            return
        self._warned_masked = total
        record_warning(
            "secrets_masked_in_archive",
            f"{total} value(s) that look like secrets ({', '.join(sorted(counts))}) were stored masked "
            f"in the archive of session {self.session_id}, and later ones will be (session.archive.masked() "
            "counts them); the live conversation keeps them (archive.keep_secrets: true would store them "
            "verbatim - unsafe)",
            session_id=self.session_id, count=total, families=sorted(counts),
        )

    def get(self, ref: str) -> dict[str, Any]:
        """The archived entry ``ref`` (``text`` is the original); ``ArchiveError`` if unknown."""
        ref = parse_ref(ref)
        held = self._held
        row = held.archive_get(self.session_id, ref) if held is not None else None
        if row is None:
            try:
                self.flush()
            except StoreError:
                if held is None:
                    raise  # the store's own fault, nothing held here: the host is told
            row = self.store.archive_get(self.session_id, ref)
        if row is None:
            raise ArchiveError(
                f"no archived message {ref} in this session; use context_search to find references"
            )
        return row

    def message(self, ref: str) -> dict[str, Any]:
        """The archived message ``ref`` as it was before the compaction."""
        return original_message(self.get(ref))

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Ranked entries for ``query`` (original text); ``ArchiveError`` for an empty query."""
        query_words(query)
        limit = max(1, int(limit))
        held = self._held
        if held is None:
            self.flush()
            return list(self.store.archive_search(self.session_id, query, limit))
        found = held.archive_search(self.session_id, query, limit)
        try:
            self.flush()
            stored = self.store.archive_search(self.session_id, query, limit)
        except Exception as exc:  # noqa: BLE001 - what this process holds still answers
            log.warning("archive_search_store_failed", session=self.session_id, error=f"{type(exc).__name__}: {exc}")
            stored = []
        seen = {row["ref"] for row in found}
        return (found + [row for row in stored if row["ref"] not in seen])[:limit]


def _targets_by_position(runs: Sequence[tuple[int, int, int | list[int]]], size: int) -> list[int]:
    """The ``after`` index standing for each position of ``before`` (-1: none), from the runs."""
    target_of = [-1] * size
    for start, end, target in runs:
        if isinstance(target, list):
            target_of[start:end] = target
        elif target >= 0:
            target_of[start:end] = [target] * (end - start)
    return target_of


def original_message(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The message an archive entry (``archive_get``) was made from."""
    extra = entry.get("extra")
    if extra:
        message = dict(extra)
        if "content" not in message:
            message["content"] = entry["text"]
        return message
    message = {"role": entry.get("role") or "", "content": entry.get("text", "")}
    if entry.get("call_id"):
        message["tool_call_id"] = entry["call_id"]
    return message


def _mark(refs: Sequence[str]) -> str:
    if len(refs) == 1:
        return f"[ref {refs[0]}]"
    if len(refs) <= MAX_REFS_IN_TEXT:
        return "[refs " + ", ".join(refs) + "]"
    return f"[refs {refs[0]} … {refs[-1]}: {len(refs)} archived messages]"


def iter_refs(message: Mapping[str, Any]) -> Iterable[str]:
    """The archive references a message carries (``_refs`` or ``_ref``)."""
    refs = message.get(REFS_KEY)
    if refs:
        return tuple(refs)
    ref = message.get(REF_KEY)
    return (ref,) if ref else ()

"""The Session's lossless archive: what a compaction removed or rewrote, kept with a reference.

Whatever the engine (built-in, contrib, third-party), ``CompactionLoop.run_engine`` hands the
list it gave the engine and the list it got back to ``SessionArchive.record`` once per
compaction. The archive diffs the two - by object identity first (engines return the messages
they keep as the same objects), by a content hash of the rest when an engine copied everything -
stores every message that left or was rewritten (the original, never the replacement) under a
short reference unique in the session (``m<turn>.<n>``: the n-th message of user turn ``turn``)
and marks each replacement (demoted one-liner, dedupe back-reference, summary, window marker)
with the references it stands for, as text (``[ref m41.3]``) and as ``_ref`` metadata, so the
model can ask for the original through ``context_search`` / ``context_expand``.

Storage is the session store's (``hermes_session_store``): a store that has the ``archive_*``
methods (the built-in SQLite store does) keeps the archive across processes; any other store,
or a session without a store, keeps it in memory for the life of the Session
(``MemoryArchiveStore``).

Nothing secret at rest: every text and every string of an entry's ``extra`` is redacted
(``hermes_core.redaction``) when the batch is built - on the store's writer thread, off the
request path - with the session's ``Redactor``, so a secret is stored as a stable placeholder
(``[REDACTED:aws_secret#3f9a1c]``, the same for the same secret in the whole session) and the
store (``sessions.db``, Redis, memory) never holds it. ``archive.keep_secrets: true`` (unsafe)
stores the verbatim text. Opaque provider bytes (a thinking block's ``signature``, encrypted
reasoning) are kept as they are. The recall tools redact again on the way to the model.
"""

from __future__ import annotations

import bisect
import collections
import itertools
import json
import operator
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import attrs
import xxhash

from hermes_core.diagnostics import record_warning
from hermes_core.errors import StoreError
from hermes_core.logging import get_logger
from hermes_core.redaction import Redactor, redact_data

log = get_logger("hermes_core.archive")

#: Metadata keys the archive sets on a replacement message.
REF_KEY = "_ref"
REFS_KEY = "_refs"
#: At most this many references are spelled out in a replacement's text.
MAX_REFS_IN_TEXT = 6
#: The sentence the summary's framing gains when the recall tools can answer.
TOOLS_SENTENCE = (
    "The full text of everything summarised or shortened here is archived: call "
    "context_search(query) to find it and context_expand(ref) to read an original."
)
#: The tools a store-backed archive makes available to the model.
RECALL_TOOLS = ("context_search", "context_expand")

_REF_RE = re.compile(r"^m(\d+)\.(\d+)$")
_WORD_RE = re.compile(r"[^\W_]+")
_CAMEL_PART_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


class ArchiveError(ValueError):
    """A bad request to the archive (empty query, malformed or unknown reference)."""


# --- text of a message --------------------------------------------------------------------


def message_text(message: Mapping[str, Any]) -> str:
    """The searchable, expandable text of ``message``: a string content as it is (so a tool
    result comes back byte for byte), text parts joined, tool calls as ``name(arguments)``."""
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, Mapping):
                value = part.get("text")
                if isinstance(value, str):
                    parts.append(value)
                elif part.get("type") in {"image_url", "input_image", "image"}:
                    parts.append("[image]")
            elif isinstance(part, str):
                parts.append(part)
        text = "\n".join(parts)
    else:
        text = ""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        lines = []
        for call in calls:
            # ``type() is dict`` first: an ABC isinstance costs ~0.3 us, per call of 100k messages.
            fn = call.get("function") if type(call) is dict or isinstance(call, Mapping) else None
            if type(fn) is dict or isinstance(fn, Mapping):
                lines.append(_call_line(fn))
        if lines:
            text = (text + "\n" if text else "") + "\n".join(lines)
    return text


def _call_line(fn: Mapping[str, Any]) -> str:
    """A tool call's line in an archived assistant message's text: ``[tool call name] args``."""
    args = fn.get("arguments")
    args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
    return f"[tool call {fn.get('name', '?')}] {args}"


def _letter_classes() -> bytes:
    table = bytearray(b" " * 256)
    table[ord("a"):ord("z") + 1] = b"a" * 26
    table[ord("A"):ord("Z") + 1] = b"A" * 26
    return bytes(table)


#: UTF-8 byte -> ``a`` (ASCII lower), ``A`` (ASCII upper) or a space (anything else).
_LETTER_CLASSES = _letter_classes()


def identifier_parts(text: str) -> str:
    """The parts of the CamelCase identifiers in ``text`` (``KeyError`` -> ``Key Error``), so a
    search for one part finds the whole; snake_case and paths split in the tokenizer itself.

    A CamelCase identifier is a run of ASCII letters with a lower-case letter before an
    upper-case one. The runs are found on the UTF-8 bytes mapped to letter classes, where the
    hump is the two-byte string ``aA`` and ``bytes.find`` (C, memchr-speed) does the scanning:
    a regular expression costs ~30 ns per character here, 16x the whole, on the archive's
    writer thread where it holds the GIL.
    """
    if not text:
        return ""
    raw = text.encode("utf-8", "surrogatepass")
    classes = raw.translate(_LETTER_CLASSES)
    at = classes.find(b"aA")
    if at < 0:
        return ""
    words: dict[bytes, None] = {}
    while at >= 0:
        start = classes.rfind(b" ", 0, at) + 1
        end = classes.find(b" ", at + 2)
        if end < 0:
            end = len(classes)
        words[raw[start:end]] = None
        at = classes.find(b"aA", end)
    return " ".join(" ".join(_CAMEL_PART_RE.findall(word.decode("ascii"))) for word in words)


def query_words(query: Any) -> list[str]:
    """The words of a search query that hold something searchable (letters or digits).

    Each word is matched as a phrase of its parts, so ``parse_config``, ``src/app/main.py`` and
    ``KeyError`` are found as written, and FTS syntax (``"``, ``*``, ``:``, ``AND``) is text.
    Raises ``ArchiveError`` when nothing searchable is left.
    """
    if not isinstance(query, str):
        raise ArchiveError(f"query must be a string, got {type(query).__name__}")
    words = [w for w in query.split() if _WORD_RE.search(w)]
    if not words:
        raise ArchiveError(
            "the query is empty or holds no letters or digits; search for a word, an "
            "identifier, a path or an error text"
        )
    return words[:32]


def fts_match(words: Sequence[str], *, any_word: bool = False) -> str:
    """An FTS5 MATCH expression: each word a quoted phrase (quotes doubled), AND or OR."""
    phrases = ['"' + w.replace('"', '""') + '"' for w in words]
    return (" OR " if any_word else " ").join(phrases)


def snippet(text: str, words: Sequence[str], width: int = 240) -> str:
    """About ``width`` characters of ``text`` around the first match of one of ``words``."""
    if len(text) <= width:
        return text
    lowered = text.lower()
    at = -1
    for word in words:
        parts = _WORD_RE.findall(word.lower())
        if not parts:
            continue
        at = lowered.find(word.lower())
        if at < 0:
            at = lowered.find(parts[0])
        if at >= 0:
            break
    if at < 0:
        at = 0
    start = max(0, at - width // 3)
    end = min(len(text), start + width)
    start = max(0, end - width)
    out = text[start:end]
    return ("…" if start > 0 else "") + out + ("…" if end < len(text) else "")


def parse_ref(ref: Any) -> str:
    """``ref`` stripped and checked (``m41.3``); ``ArchiveError`` when it is not one."""
    if not isinstance(ref, str) or not _REF_RE.match(ref.strip().removeprefix("ref ").strip()):
        raise ArchiveError(
            f"{ref!r} is not an archive reference; references look like m41.3 "
            "(see the [ref ...] marks in the conversation or the hits of context_search)"
        )
    return ref.strip().removeprefix("ref ").strip()


# --- full-text search (FTS5: the SQLite store's table, the in-process index's) ------------

#: The FTS5 columns: the text as it was and the CamelCase parts of its identifiers.
FTS_COLUMNS = "text, idents"
#: A search ranks at most this many matches, the newest: BM25 over every match of a word found
#: in most entries costs ~0.4 us per match (40 ms at 100k), so a query with more matches is
#: ranked among its newest ``RANK_WINDOW`` (an unranked newest-first scan stops there).
RANK_WINDOW = 2_000

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]


def fts_search(
    query: Query, table: str, words: Sequence[str], limit: int,
    keep: Callable[[list[int]], set[int]] | None = None,
) -> list[tuple[int, float]]:
    """``(rowid, bm25)`` of the best ``limit`` rows of the FTS5 ``table`` for ``words`` (lower
    is better): rows with every word first, any word when none has them all.

    ``query(sql, params)`` runs a statement; ``keep(rowids)`` (optional) says which of the
    ranked rows count (the SQLite store keeps one session's), and the ranking window widens
    while others crowd them out. Ranking reads the FTS table alone (rowid and score: nothing
    wide goes through the sorter).
    """
    rank_sql = (
        f"SELECT rowid, bm25({table}, 1.0, 0.5) AS score FROM {table} "
        f"WHERE {table} MATCH ? AND rowid >= ? ORDER BY score LIMIT ?"
    )
    floor_sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?"
    ranked: list[tuple[int, float]] = []
    for any_word in (False, True):
        if any_word and len(words) == 1:
            break
        match = f"{{text idents}} : ({fts_match(words, any_word=any_word)})"
        newest = query(floor_sql, (match, RANK_WINDOW - 1))
        floor = int(newest[0][0]) if newest else 0
        window = limit + 8
        while True:
            found = query(rank_sql, (match, floor, window))
            if keep is None:
                ranked = [(r[0], r[1]) for r in found]
            else:
                mine = keep([r[0] for r in found]) if found else set()
                ranked = [(r[0], r[1]) for r in found if r[0] in mine]
            if len(ranked) >= limit or len(found) < window or window >= 1 << 16:
                break
            window *= 8
        if ranked:
            break
    return ranked


def indexable(text: str) -> str:
    """``text`` as SQLite can hold it: lone surrogates (from JSON ``\\ud800``) become ``?`` (the
    UTF-8 encoder's ``replace`` handler)."""
    if text.isascii():  # O(1) in CPython: the flag of a compact string
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


class ArchiveIndex:
    """Full-text search over archived texts held in process (the in-memory store's, Redis'),
    with the SQLite store's tokenizer and query semantics: an in-memory FTS5 table, so the
    tokenising runs in C (the pure-Python index it replaces cost ~2 s per 10k messages).

    Entries are indexed lazily, at the next search, in one transaction: an archive that is
    never searched never pays for its index, and a compaction pays for a list append. The FTS
    table is contentless (the texts are the caller's, held here for removal); ties in rank go
    to the newer entry (added later).
    """

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f"CREATE VIRTUAL TABLE fts USING fts5({FTS_COLUMNS}, content='')")
        self._lock = threading.Lock()
        self._rowids: dict[Any, int] = {}
        self._keys: dict[int, Any] = {}
        self.texts: dict[Any, str] = {}
        self._pending: dict[int, str] = {}
        self._last = 0

    def __len__(self) -> int:
        return len(self._rowids)

    def add(self, key: Any, text: str) -> None:
        with self._lock:
            if key in self._rowids:
                return
            self._last += 1
            self._rowids[key] = self._last
            self._keys[self._last] = key
            self.texts[key] = text
            self._pending[self._last] = text

    def remove(self, key: Any) -> None:
        with self._lock:
            rowid = self._rowids.pop(key, None)
            if rowid is None:
                return
            del self._keys[rowid]
            text = self.texts.pop(key)
            if self._pending.pop(rowid, None) is None:
                # A contentless table forgets a row given the values it indexed.
                text = indexable(text)
                self._conn.execute(
                    "INSERT INTO fts (fts, rowid, text, idents) VALUES ('delete', ?, ?, ?)",
                    (rowid, text, identifier_parts(text)),
                )

    def _index_pending(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        rows = ((rowid, text, identifier_parts(text)) for rowid, text in
                ((rowid, indexable(text)) for rowid, text in pending.items()))
        self._conn.execute("BEGIN")
        try:
            self._conn.executemany("INSERT INTO fts (rowid, text, idents) VALUES (?, ?, ?)", rows)
        except BaseException:
            self._conn.execute("ROLLBACK")
            self._pending = {**pending, **self._pending}
            raise
        self._conn.execute("COMMIT")

    def search(self, words: Sequence[str], limit: int) -> list[Any]:
        """The keys of the best ``limit`` entries, best first (newer first on ties)."""
        with self._lock:
            if not self._rowids:
                return []
            self._index_pending()
            ranked = fts_search(lambda sql, params: self._conn.execute(sql, params).fetchall(),
                                "fts", words, max(1, limit))
            ranked.sort(key=lambda r: (r[1], -r[0]))
            return [self._keys[rowid] for rowid, _score in ranked[: max(1, limit)]]


# --- the in-memory store -------------------------------------------------------------------


class MemoryArchiveStore:
    """The archive of sessions whose store keeps none (or no store): lives with the process.

    Implements the same ``archive_*`` contract as the SQLite store (tests run both).
    """

    def __init__(self) -> None:
        self._rows: dict[str, dict[str, dict[str, Any]]] = {}
        self._index: dict[str, ArchiveIndex] = {}
        self._order = 0
        self._pending: list[tuple[str, Sequence[Mapping[str, Any]], float]] = []
        self._lock = threading.Lock()

    def archive_put(self, session_id: str, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep ``records`` (a list's dicts are kept as they are: the caller hands them over).

        An ``ArchivedBatch`` is kept as it is until the next read of the store, which builds its
        records (the request path that archives pays for a list append)."""
        with self._lock:
            self._pending.append((session_id, records, time.time()))
            if not isinstance(records, ArchivedBatch):
                self._drain()  # a caller's list may be reused: take its dicts now

    def _drain(self) -> None:
        """Store the batches put since the last read (the lock is held)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        for session_id, records, now in pending:
            rows = self._rows.setdefault(session_id, {})
            index = self._index.setdefault(session_id, ArchiveIndex())
            for record in records:
                ref = record["ref"]
                if ref in rows:
                    continue
                row = record if type(record) is dict else dict(record)
                row.setdefault("created_at", now)
                self._order += 1
                row["_order"] = self._order
                rows[ref] = row
                index.add(ref, row["text"])

    def archive_flush(self) -> None:
        with self._lock:
            self._drain()

    def archive_get(self, session_id: str, ref: str) -> dict[str, Any] | None:
        with self._lock:
            self._drain()
            row = self._rows.get(session_id, {}).get(ref)
        return dict(row) if row is not None else None

    def archive_refs(self, session_id: str) -> set[str]:
        with self._lock:
            self._drain()
            return set(self._rows.get(session_id, {}))

    def archive_stats(self, session_id: str) -> dict[str, Any]:
        with self._lock:
            self._drain()
            rows = list(self._rows.get(session_id, {}).values())
        return _stats(session_id, rows)

    def archive_sessions(self) -> list[dict[str, Any]]:
        with self._lock:
            self._drain()
            ids = [sid for sid, rows in self._rows.items() if rows]
        return [self.archive_stats(sid) for sid in sorted(ids)]

    def archive_search(self, session_id: str, query: str, limit: int = 5) -> list[dict[str, Any]]:
        words = query_words(query)
        with self._lock:
            self._drain()
            rows = self._rows.get(session_id, {})
            index = self._index.get(session_id)
            keys = index.search(words, limit) if index is not None else []
            return [dict(rows[ref]) for ref in keys]

    def archive_prune(
        self, *, max_age_days: float | None = None, max_bytes_per_session: int | None = None,
        session_id: str | None = None,
    ) -> dict[str, int]:
        removed = 0
        cutoff = time.time() - max_age_days * 86_400 if max_age_days else None
        with self._lock:
            self._drain()
            for sid, rows in self._rows.items():
                if session_id is not None and sid != session_id:
                    continue
                ordered = sorted(rows.values(), key=lambda r: (r["created_at"], r["_order"]))
                total = sum(map(_text_bytes, ordered))
                for row in ordered:
                    old = cutoff is not None and row["created_at"] < cutoff
                    over = max_bytes_per_session is not None and total > max_bytes_per_session
                    if not (old or over):
                        continue
                    total -= _text_bytes(row)
                    del rows[row["ref"]]
                    self._index[sid].remove(row["ref"])
                    removed += 1
        return {"removed": removed}

    def archive_delete(self, session_id: str) -> int:
        with self._lock:
            self._drain()
            self._index.pop(session_id, None)
            return len(self._rows.pop(session_id, {}))


def _text_bytes(row: Mapping[str, Any]) -> int:
    """The UTF-8 size of an entry's text; a lone surrogate (JSON's ``\\ud800``, kept as it was
    archived) counts as its 3 bytes instead of failing the stats or the prune."""
    text = row["text"]
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _stats(session_id: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "count": len(rows),
        "bytes": sum(map(_text_bytes, rows)),
        "turns": sum(1 for r in rows if r.get("turn_start")),
        "first": min((r["created_at"] for r in rows), default=None),
        "last": max((r["created_at"] for r in rows), default=None),
        "max_seq": max((int(r.get("seq") or 0) for r in rows), default=0),
    }


ARCHIVE_METHODS = ("archive_put", "archive_get", "archive_search", "archive_refs", "archive_stats")


def has_archive(store: Any) -> bool:
    """Whether ``store`` implements the archive contract."""
    return store is not None and all(callable(getattr(store, m, None)) for m in ARCHIVE_METHODS)


# --- the diff ------------------------------------------------------------------------------


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


# --- the archive ---------------------------------------------------------------------------


@attrs.define(kw_only=True, slots=True)
class HistoryScan:
    """What recording a compaction reads of each message of its input, by position: its role,
    its content (the snapshot the archive keeps), a tool result's call id, the messages that are
    not plain (``is_plain``), the positions of messages carrying a reference (replacements of an
    earlier compaction) and of user messages that are summaries (no turn starts there). Read by
    ``_scan``, or handed over by the caller's own pass over the list (``holding_scan``).

    ``contents``, ``call_ids`` (tool results only) and ``odd`` are dicts by position, not
    lists: the archive's batch holds them until a store builds its records, and the young
    collection that follows a compaction traverses every item of a young list - a cache miss on
    the header of each of the host's contents and messages (~5 ms at 10k messages, 0.4x of issue
    13's reference pass). A dict holding only strings (or None) is not tracked by the collector
    at all, and only the messages that are not plain are held as dicts.
    """

    roles: list[Any] = attrs.Factory(list)
    contents: dict[int, Any] = attrs.Factory(dict)
    call_ids: dict[int, Any] = attrs.Factory(dict)
    odd: dict[int, dict[str, Any]] = attrs.Factory(dict)
    marked: list[int] = attrs.Factory(list)
    summaries: list[int] = attrs.Factory(list)


def is_plain(message: Mapping[str, Any], role: Any, content: Any, call_id: Any) -> bool:
    """Whether ``message`` holds nothing but a role, a string content and, for a tool result,
    a non-empty call id (``role``, ``content``, ``call_id``: its values, already read): its
    archive entry is made from those alone (its text the content, no extra)."""
    size = len(message)
    return (
        (size == 2 or (size == 3 and role == "tool" and type(call_id) is str and call_id != ""))
        and type(role) is str and role != "" and type(content) is str
    )


#: The list (its length) whose ``HistoryScan`` a caller read in a pass of its own.
_held_scan: ContextVar[tuple[Any, int, HistoryScan] | None] = ContextVar("hermes_held_scan", default=None)


@contextmanager
def holding_scan(messages: Sequence[Any], scan: HistoryScan | None) -> Iterator[None]:
    """Within the block, recording a compaction of ``messages`` (the same list object at the
    same length) takes ``scan`` as what it would read of them (``Session.compress``: its one
    pass over the history, ``hermes_core.intake``). ``None``: the block changes nothing."""
    token = _held_scan.set(None if scan is None else (messages, len(messages), scan))
    try:
        yield
    finally:
        _held_scan.reset(token)


def held_scan(messages: Sequence[Any]) -> HistoryScan | None:
    """The columns a caller's one pass read of ``messages`` (``holding_scan``: the same list
    object at the same length), while it holds them - ``Session.compress`` during a forced
    compression with the archive on; None otherwise. ``odd`` then names every message that is
    not plain (a plain one has no key but its role, content and call id): an engine may look
    for metadata there only."""
    held = _held_scan.get()
    if held is not None and held[0] is messages and held[1] == len(messages):
        return held[2]
    return None


def _scan(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> tuple[list[int], list[Any], dict[int, Any], dict[int, Any], dict[int, dict[str, Any]], set[int] | None]:
    """One pass over the messages (at 100k each pass over the host's dicts costs ~20 ms of
    cache misses): per position where ``after`` kept it (``kept_positions``), its role
    (``_EARLIER`` for a replacement of an earlier compaction), its content (the snapshot the
    archive keeps), a tool result's call id and the message when it is not plain (the
    ``HistoryScan`` columns, by position); and the positions of the user messages that are
    summaries when known (held: no pass at all; None: ``_records`` asks the users)."""
    where = {id(m): i for i, m in enumerate(after)}.get
    held = _held_scan.get()
    if held is not None and held[0] is before and held[1] == len(before):
        scan = held[2]
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


#: The per-entry columns of ``ArchivedBatch.columns()``, in this order.
BATCH_COLUMNS = ("ref", "seq", "role", "tool", "call_id", "turn", "position", "replaced_by", "turn_start", "text", "extra")


class ArchivedBatch(Sequence[dict[str, Any]]):
    """The entries of one compaction, built when first read: column by column for a store that
    writes rows (``columns()``: the SQLite store binds them as they are), or as the read-only
    sequence of ``archive_put`` record dicts (``ref``, ``seq``, ``role``, ``tool``, ``call_id``,
    ``turn``, ``position``, ``replaced_by``, ``text``, ``extra``, ``created_at``, ``turn_start``).

    The request path (``SessionArchive.record``) hands over what it already holds - what its one
    pass read of each message of the list it gave the engine (role, content, a result's call id,
    the messages that are not plain: ``HistoryScan``), the removed positions, their references -
    and the per-message work (the text, the extra keys, the tool name of a result) runs where
    the batch is first read: the SQLite store's writer thread, the in-memory store's first read.

    Nothing is lost to a host that reuses its dicts or its list: each message's role and
    ``content`` are snapshotted at the compaction (a string is immutable; rewriting
    ``message["content"]`` later does not reach the archive), and the messages that are not
    plain are held by position. Nested structures (a content list, ``tool_calls``) are shared
    with the host, as a shallow copy would share them.
    """

    __slots__ = ("_odd", "_contents", "_roles", "_call_ids", "_positions", "_refs", "_turns", "_targets",
                 "_starts", "_first_seq", "created_at", "_columns", "_built", "_lock", "_redactor")

    def __init__(
        self, *, odd: Mapping[int, dict[str, Any]], contents: Mapping[int, Any], roles: list[Any],
        call_ids: Mapping[int, Any], positions: list[int], refs: list[str], turns: list[int],
        targets: list[int], starts: list[int], first_seq: int, created_at: float,
        redactor: Redactor | None = None,
    ) -> None:
        # Of every message of the context, by position (``HistoryScan``): its content, its
        # role, a tool result's call id, and the message itself when it is not plain.
        self._odd = odd
        self._contents = contents
        self._roles = roles
        self._call_ids = call_ids
        self._positions = positions
        self._refs = refs
        self._turns = turns
        self._targets = targets
        self._starts = starts
        self._first_seq = first_seq
        #: When the compaction archived these entries (one time for the batch).
        self.created_at = created_at
        self._columns: dict[str, Sequence[Any]] | None = None
        self._built: list[dict[str, Any]] | None = None
        self._lock = threading.Lock()
        #: Redacts every text and extra when the batch is built (``None``: kept verbatim).
        self._redactor = redactor

    @property
    def refs(self) -> list[str]:
        """The references, in order (no record is built to read them)."""
        return self._refs

    def __len__(self) -> int:
        return len(self._refs)

    def columns(self) -> dict[str, Sequence[Any]]:
        """The entries column by column (``BATCH_COLUMNS``: one sequence each, in entry order;
        ``text`` the original text, ``extra`` a mapping or None): built once, then cached. An
        ``extra`` may be the host's message itself (when it holds what the extra would): a
        store serialises it or copies it, and never keeps or changes it."""
        built = self._columns
        if built is not None:
            return built
        with self._lock:
            if self._columns is None:
                self._columns = self._build()
                # What the columns hold is all that is needed now: let the host's messages go.
                self._odd, self._contents, self._roles, self._call_ids = {}, {}, [], {}
            return self._columns

    def records(self) -> list[dict[str, Any]]:
        """The record dicts (built once, then cached)."""
        built = self._built
        if built is not None:
            return built
        columns = self.columns()
        with self._lock:
            if self._built is None:
                n = len(self._refs)
                keys = (*BATCH_COLUMNS, "created_at")
                built = [
                    dict(zip(keys, row)) for row in
                    zip(*(columns[k] for k in BATCH_COLUMNS), itertools.repeat(self.created_at, n))
                ]
                for record in built:
                    if record["extra"] is not None:  # may be the host's message: a record owns its own
                        record["extra"] = dict(record["extra"])
                self._built = built
            return self._built

    def _build(self) -> dict[str, Sequence[Any]]:
        # Most archived messages are plain: a role, a string content and, for a tool result, its
        # call id. Their text is the content and they have no extra, so their columns come from
        # what the request path read, in C (``map``); only the others (tool calls, content
        # parts, other keys: ``HistoryScan.odd``) go through ``message_text`` and ``_extra_of``
        # one by one.
        held = self._odd
        positions = self._positions
        n = len(positions)
        texts = list(map(self._contents.__getitem__, positions))
        roles = list(map(self._roles.__getitem__, positions))
        call_ids: list[Any] = [c if type(c) is str else "" for c in map(self._call_ids.get, positions)]
        extras: list[Any] = [None] * n
        tools: list[Any] = [""] * n
        odd = list(itertools.compress(range(n), map(held.__contains__, positions)))
        names: dict[str, str] = {}
        lines_at: dict[int, str] = {}
        if any(call_ids) or odd:
            # One visit of every assistant message's calls: the names of the results and the
            # text of the removed assistant messages (``message_text``'s lines).
            names, lines_at = _tool_names(held, self._roles, map(positions.__getitem__, odd))
        if names:
            tools = list(map(names.get, call_ids, itertools.repeat("")))
        for i in odd:
            message = held[positions[i]]
            content = texts[i]
            if message.get("content") is not content:
                message = {**message, "content": content}
            role = roles[i] or ""
            call_id = message.get("tool_call_id") or ""
            tool = message.get("name") or ""
            if role == "tool" and not tool and call_id:
                tool = names.get(call_id, "")
            roles[i], call_ids[i], tools[i] = str(role), str(call_id), str(tool)
            lines = lines_at.get(positions[i])
            if lines is not None and type(content) is str:
                texts[i] = content + "\n" + lines if content else lines
            else:
                texts[i] = message_text(message)
            if ("tool_calls" in message or type(content) is not str) and "content" in message:
                # Its extra holds every key of it (``_extra_of``): the message itself stands
                # in, serialised by the store or copied into a record, never a dict more here.
                extras[i] = message
            else:
                extras[i] = _extra_of(message)
        if self._redactor is not None:
            texts, extras = self._redacted(texts, extras)
        starts = set(self._starts)
        return {
            "ref": self._refs, "seq": range(self._first_seq, self._first_seq + n), "role": roles, "tool": tools,
            "call_id": call_ids, "turn": self._turns, "position": positions, "replaced_by": self._targets,
            "turn_start": list(map(starts.__contains__, positions)), "text": texts, "extra": extras,
        }

    def _redacted(self, texts: list[Any], extras: list[Any]) -> tuple[list[Any], list[Any]]:
        """``texts`` and ``extras`` with every secret replaced by its placeholder (an extra is
        copied where something changed: the host's message is never touched)."""
        redactor = self._redactor
        assert redactor is not None
        before = sum(redactor.counts().values())
        texts = [redactor.redact(t) if type(t) is str else t for t in texts]
        extras = [redact_data(e, redactor) if e is not None else None for e in extras]
        masked = sum(redactor.counts().values()) - before
        if masked:
            log.info("archive_secrets_masked", masked=masked, entries=len(texts))
        return texts, extras

    def __getitem__(self, index: Any) -> Any:
        return self.records()[index]

    def __iter__(self) -> Any:
        return iter(self.records())


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
        self, before: list[dict[str, Any]], after: list[dict[str, Any]], *, phase: str = ""
    ) -> list[dict[str, Any]]:
        """Archive what ``after`` no longer holds of ``before``; ``after`` with its replacements
        marked (a new list; the engine's list and dicts are left alone)."""
        if not self.enabled or after is before:
            return after
        started = time.perf_counter()
        with self._lock:
            self._load()
            kept, tags, contents, call_ids, odd, summaries = _scan(before, after)
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
        used = self._used
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
        refs = [f"m{turn}.{place}" for turn, place in zip(turns, places)]
        if not used and not self._unhashed:
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
        target_of = [-1] * size
        for start, end, target in runs:
            if isinstance(target, list):
                target_of[start:end] = target
            elif target >= 0:
                target_of[start:end] = [target] * (end - start)
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

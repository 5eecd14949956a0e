"""Text and full-text search of archived messages: a message's searchable text, query words,
snippets, references, and the FTS5 search shared by the SQLite store and the in-process index
(``ArchiveIndex``: an in-memory FTS5 table for the memory and Redis stores)."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

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

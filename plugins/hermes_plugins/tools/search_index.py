"""The BM25 index over tool definitions: tokenizing (word split, Snowball stems, bounded pure
memos), the indexed fields of a definition, and ``SearchIndex`` with its scoring and admission
rules (``bm25``'s docstring states them; ``bm25`` keeps an index per catalog)."""

from __future__ import annotations

import math
import re
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from itertools import compress, repeat
from operator import ge, itemgetter, neg
from typing import Any, NamedTuple

import attrs

from hermes_plugins.tools.sources import source_label

K1 = 1.5
B = 0.75
_WORD = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SEPARATORS = re.compile(r"[_.:\-]+")
_STEM_MEMO_MAX = 200_000
_TOKEN_CACHE_MAX = 50_000
_INDEX_MEMO_MAX = 8

_lock = threading.Lock()
_stems: dict[str, str] = {}
_stemmer: Any = None


def _stem_word(word: str) -> str:
    global _stemmer
    with _lock:  # the Snowball stemmer object keeps state between calls
        if _stemmer is None:
            _stemmer = _load_stemmer()
        stem = str(_stemmer(word))
        if len(_stems) >= _STEM_MEMO_MAX:
            _stems.clear()
        _stems[word] = stem
    return stem


def _load_stemmer() -> Any:
    try:
        import snowballstemmer  # type: ignore[import-untyped]
    except ImportError:
        from hermes_core.plugin import record_warning

        record_warning(
            "tool_search_stemmer_missing",
            "the snowballstemmer package is not installed; tool search matches words without "
            "stemming (install it: pip install snowballstemmer)",
            plugin="tool_search",
        )
        return lambda word: word
    return snowballstemmer.stemmer("english").stemWord


def tokenize(text: str) -> list[str]:
    """``[A-Za-z0-9]+`` runs, lower-cased, Snowball-English stemmed."""
    stems = _stems
    return [stems[w] if w in stems else _stem_word(w) for w in _WORD.findall(text.lower())]


def name_words(name: str) -> str:
    """A tool name as words: ``mcp__`` prefix dropped, separators and camelCase split."""
    name = name.removeprefix("mcp__")
    return " ".join(_SEPARATORS.sub(" ", _CAMEL.sub(" ", name)).split())


#: (name, source, description, top-level parameter names): all that is indexed about a tool.
ToolKey = tuple[str, str, str, tuple[str, ...]]


def tool_key(definition: Any) -> ToolKey | None:
    """The indexed fields of one definition, normalised; ``None`` when it has no name."""
    if not isinstance(definition, Mapping):
        return None
    fn = definition.get("function")
    if not isinstance(fn, Mapping):
        fn = definition
    params = fn.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    return normalise_key(
        (
            fn.get("name"),
            definition.get("source"),
            fn.get("description"),
            tuple(props.keys()) if isinstance(props, Mapping) else (),
        )
    )


def normalise_key(raw: tuple[Any, ...]) -> ToolKey | None:
    """Raw fields as read from a definition -> the indexed key (a pure function of ``raw``)."""
    if len(raw) == 2:  # (_ODD, key) from the slow path: already normalised
        return raw[1]  # type: ignore[no-any-return]
    name, source, description, params = raw
    name = _text(name)
    if not name:
        return None
    return (
        name,
        _text(source).strip(),
        _text(description),
        tuple(_text(p) for p in params if isinstance(p, str)),
    )


def _text(value: Any) -> str:
    """A string field as plain ``str`` (subclasses too: equal strings index the same), else ""."""
    if value.__class__ is str:
        return value
    return str.__str__(value) if isinstance(value, str) else ""


def search_text(key: ToolKey) -> str:
    name, source, description, params = key
    words = name_words(name)
    parts = [words]
    label = source_label(source, name)
    if label != "other" and label.lower() not in words.lower().split():
        parts.append(label)
    parts.append(description)
    parts.extend(params)
    return " ".join(parts)


@attrs.define(slots=True)
class _Doc:
    name: str | None
    tf: dict[str, int]
    length: int


_NO_DOC = _Doc(name=None, tf={}, length=0)
_token_cache: dict[tuple[Any, ...], _Doc] = {}


def doc_tokens(raw: tuple[Any, ...]) -> _Doc:
    """Name and term frequencies of one tool's indexed text, cached by its raw key."""
    cached = _token_cache.get(raw)
    if cached is not None:
        return cached
    key = normalise_key(raw)
    if key is None:
        return _NO_DOC
    tf: dict[str, int] = {}
    tokens = tokenize(search_text(key))
    for token in tokens:
        tf[token] = tf.get(token, 0) + 1
    doc = _Doc(name=key[0], tf=tf, length=len(tokens))
    if len(_token_cache) >= _TOKEN_CACHE_MAX:
        _token_cache.clear()
    _token_cache[raw] = doc
    return doc


class SearchHit(NamedTuple):
    """One search result; ``position`` is the tool's index in the definitions searched.

    A named tuple, not a frozen attrs record: a query makes one per hit on every
    ``tool_search`` call, and it never leaves this plugin."""

    name: str
    score: float
    exact: bool = False
    position: int = -1


_hit = partial(tuple.__new__, SearchHit)


class SearchIndex:
    """An inverted index (term -> doc ids) with per-term weights computed on first use."""

    __slots__ = (
        "names", "positions", "derived", "_docs", "_lower", "_postings", "_weights", "_k", "_kb",
        "_raw",
    )

    def __init__(self, raw_keys: Sequence[tuple[Any, ...]]) -> None:
        self._raw = raw_keys if isinstance(raw_keys, (list, tuple)) else list(raw_keys)
        #: Values derived from the indexed fields alone (``key``), memoised with the index by
        #: its users: the index is reused only while those fields are equal, so they cannot drift.
        self.derived: dict[Any, Any] = {}
        docs: list[_Doc] = []
        self.positions: list[int] = []  # doc id -> index of its definition
        for position, doc in enumerate(map(doc_tokens, self._raw)):
            if doc.name is not None:
                docs.append(doc)
                self.positions.append(position)
        self._docs = docs
        self.names: list[str] = [doc.name for doc in docs]  # type: ignore[misc]
        lower: dict[str, int] = {}
        for i, name in enumerate(self.names):
            lower.setdefault(name.lower(), i)
        self._lower = lower
        postings: dict[str, list[int]] = defaultdict(list)
        total = 0
        for i, doc in enumerate(docs):
            total += doc.length
            for term in doc.tf:
                postings[term].append(i)
        self._postings = dict(postings)
        avgdl = max(total / len(docs), 1.0) if docs else 1.0
        # k1 * (1 - b + b * dl / avgdl) = _k + _kb * dl
        self._k = K1 * (1.0 - B)
        self._kb = K1 * B / avgdl
        self._weights: dict[str, tuple[float, dict[int, float]]] = {}

    def __len__(self) -> int:
        return len(self._docs)

    def key(self, position: int) -> ToolKey | None:
        """The indexed fields of the definition at ``position`` of the definitions indexed."""
        return normalise_key(self._raw[position])

    def idf(self, term: str) -> float:
        n = len(self._docs)
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def _term(self, term: str) -> tuple[float, dict[int, float]]:
        cached = self._weights.get(term)
        if cached is None:
            idf = self.idf(term)
            scale = idf * (K1 + 1.0)
            docs, k, kb = self._docs, self._k, self._kb
            weights = {}
            for d in self._postings[term]:
                doc = docs[d]
                f = doc.tf[term]
                weights[d] = scale * f / (f + k + kb * doc.length)
            cached = (idf, weights)
            self._weights[term] = cached
        return cached

    def search(self, query: str, limit: int = 5) -> list[SearchHit]:
        """Best ``limit`` tools for ``query`` under the admission rules, best first."""
        # Plain loops in few bodies: a cold turn pays for every Python frame it enters
        # (comprehensions and generator expressions are frames of their own).
        if limit <= 0:
            return []
        exact = self._lower.get(query.strip().lower())
        postings = self._postings
        stems = _stems
        counts: dict[str, int] = {}
        for word in _WORD.findall(query.lower()):
            term = stems[word] if word in stems else _stem_word(word)
            if term in postings:
                counts[term] = counts.get(term, 0) + 1
        scored, exact_score = self._scored(counts, exact) if counts else ([], 0.0)
        positions = self.positions
        hits = []
        if exact is not None:
            # tuple.__new__: a named tuple's own __new__ is a Python function (a frame per hit)
            hits.append(_hit((self.names[exact], exact_score, True, positions[exact])))
        limit -= exact is not None
        if limit > 0 and scored:
            hits += _best(scored, limit, self.names, positions)
        return hits

    def _scored(self, counts: dict[str, int], exact: int | None) -> tuple[list[tuple[float, int]], float]:
        """``((score, document) of every admitted document but the exact match, the exact
        match's score)`` for the query terms ``counts`` (term -> times in the query)."""
        cache = self._weights
        pairs: list[tuple[int, dict[int, float]]] = []
        rare: list[dict[int, float]] = []
        top_idf = -1.0
        for term, mult in counts.items():
            entry = cache.get(term)
            if entry is None:
                entry = self._term(term)
            idf, weights = entry
            pairs.append((mult, weights))
            if idf > top_idf:
                top_idf, rare = idf, [weights]
            elif idf == top_idf:
                rare.append(weights)
        need = math.ceil(len(pairs) / 2) if len(pairs) >= 4 else 0
        # Only documents holding one of the rarest terms can be admitted, and those are
        # usually few: score them alone instead of walking every posting list. A term at a
        # time, over the candidates that hold it (a C-level intersection): most query terms
        # are in few of them. Each score still adds its terms in query order, from 0.0, so
        # it is the float a document-at-a-time sum gives.
        candidates = rare[0].keys() if len(rare) == 1 else set().union(*rare)
        scored: list[tuple[float, int]] = []
        exact_score = 0.0
        for d in candidates:
            score = 0.0
            hit = 0
            for mult, weights in pairs:
                w = weights.get(d)
                if w is not None:
                    score += mult * w
                    hit += 1
            if d == exact:
                exact_score = score
            elif hit >= need:
                scored.append((score, d))
        if exact is not None and exact not in candidates:
            for mult, weights in pairs:
                exact_score += mult * weights.get(exact, 0.0)
        return scored, exact_score


def _best(scored: list[tuple[float, int]], limit: int, names: Sequence[str],
          positions: Sequence[int]) -> list[SearchHit]:
    """The best ``limit`` of ``scored`` by score, ties by name.

    The limit-th best score comes from a C-level sort of the bare floats; only documents
    scoring at least that (the best, plus any tied with the last) are ranked by name: at 5,000
    tools a query has a few hundred candidates, and a Python sort key per candidate cost a
    third of the query."""
    if len(scored) > limit:
        floor = sorted(map(_SCORE, scored), reverse=True)[limit - 1]
        scored = list(compress(scored, map(ge, map(_SCORE, scored), repeat(floor))))
    docs = list(map(_DOC, scored))
    ranked = sorted(zip(map(neg, map(_SCORE, scored)), map(names.__getitem__, docs), docs))
    return [_hit((name, -minus, False, positions[d])) for minus, name, d in ranked[:limit]]


_SCORE = itemgetter(0)
_DOC = itemgetter(1)

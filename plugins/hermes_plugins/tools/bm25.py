"""BM25 search over the deferred tools (spec §16), memoised by the definitions it was built from.

Rebuilding is not where time goes (a pure-Python rebuild costs what rank_bm25's does), so the
speed comes from three caches, none of which can drift from the live definitions:

* a stem memo (word -> Snowball English stem), shared by everything (a bounded memo of a pure
  function, so it lives in the module);
* per-tool tokens, keyed by exactly the fields that are indexed (name, source, description,
  top-level parameter names): a changed catalog re-tokenizes only the tools that changed (also
  a bounded pure memo);
* the index itself, held by the host's ``ToolSearchState`` (``state.py``), keyed by a fingerprint holding those fields of every tool in catalog
  order (``fingerprint``). Equal fingerprints mean equal indexed text, so a hit is the index a
  rebuild would produce. Reading the fields costs ~0.3 us a tool; once a catalog comes back
  unchanged, one C-level ``==`` against a structural copy proves it unchanged instead; a
  frozen catalog (``hermes_core.frozen``) is recognised by identity without reading anything
  (the form to hand over in a hot loop).

Scoring: k1 1.5, b 0.75, idf ln(1 + (N - df + 0.5) / (df + 0.5)), length normalised by the
average document length (at least 1). Admission: an exact (case-insensitive) name match is
always first; any other hit must contain one of the query's rarest terms (ties all count) and,
when the query has four or more terms found in the catalog, at least half of them.
"""

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

from hermes_core.plugin import FrozenTools, all_frozen
from hermes_plugins.tools.sources import source_label
from hermes_plugins.tools.state import ToolSearchState

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
_ODD = object()  # marks a definition read the slow way
_FROZEN = object()  # marks a fingerprint made of frozen definitions


@attrs.define(slots=True)
class _Seen:
    """The catalog fingerprinted last: its fingerprint and, once it came back unchanged, a copy
    that proves it unchanged with one ``==`` (see ``_structural_copy``)."""

    print_: tuple[Any, ...]
    copy: list[dict[str, Any]] | tuple[dict[str, Any], ...] | None = None


_SEEN_MAX = 4  # catalogs remembered (a host serving several sessions alternates between them)


def fingerprint(
    definitions: Sequence[Any], state: ToolSearchState | None = None
) -> tuple[Any, ...]:
    """Every indexed field of every definition, in catalog order, as one flat tuple.

    A catalog seen before (by ``state``: the host's, see ``state.py``; without one nothing is
    remembered) returns the *same* tuple object, so memo lookups compare by identity
    first. Once a catalog came back unchanged, proving it unchanged again is one C-level ``==``
    against a copy of the dictionaries on the way to an indexed field (``_structural_copy``);
    otherwise the fields are read one by one (``_read``). Frozen definitions
    (``hermes_core.frozen``) cannot change, so their fingerprint is the definitions themselves:
    a ``FrozenTools`` is its own (the same object next turn: nothing to read or compare), and a
    list of frozen definitions is compared by identity, item by item.
    """
    if definitions.__class__ is FrozenTools:
        return definitions
    if definitions and all_frozen(definitions):
        return (_FROZEN, *definitions)
    return _plain_fingerprint(definitions, state or ToolSearchState())[0]


def settled_fingerprint(
    definitions: Sequence[Any], state: ToolSearchState
) -> tuple[Any, ...] | None:
    """The fingerprint of a catalog of plain dicts that has just been proven equal to its
    structural copy (so every level is a ``dict`` and every field ``==`` what was copied);
    ``None`` for any other catalog (not settled yet, or not plain dicts all the way)."""
    seen = state.seen
    tried = None
    if seen:
        # The catalog of the last turn, unchanged: the common case, proven here without the
        # two calls the general path takes (a turn's cold start pays for every frame).
        entry = seen[0]
        copy = entry.copy
        if copy is not None:
            if _prove(definitions, entry):
                return entry.print_
            tried = entry
    print_, proven = _plain_fingerprint(definitions, state, tried)
    return print_ if proven else None


def _plain_fingerprint(
    definitions: Sequence[Any], state: ToolSearchState, tried: _Seen | None = None
) -> tuple[tuple[Any, ...], bool]:
    """(fingerprint, proven unchanged); ``tried``: an entry already compared, in vain."""
    seen = state.seen
    for entry in seen:
        if entry.copy is not None and entry is not tried and _prove(definitions, entry):
            if entry is not seen[0]:
                _remember(state, entry)
            return entry.print_, True
    print_ = _read(definitions)
    for entry in seen:
        if entry.print_ == print_:
            # Unchanged since last time: the catalog is settling, so the copy is now worth
            # making. A catalog that changes every turn never pays for it.
            copy = _structural_copy(definitions)
            if copy is not None and _read(copy) != print_:
                copy = None  # changed while being copied (another thread): prove nothing
            _remember(state, _Seen(print_=entry.print_, copy=copy), entry)
            return entry.print_, copy is not None
    _remember(state, _Seen(print_=print_))
    return print_, False


def subset_fingerprint(print_: tuple[Any, ...], positions: Sequence[int]) -> tuple[Any, ...]:
    """What ``fingerprint`` reads from ``[definitions[i] for i in positions]``, cut out of the
    whole catalog's (plain) fingerprint ``print_`` instead of read again."""
    bounds = _bounds(print_)
    out: list[Any] = []
    for position in positions:
        start, stop = bounds[position]
        out.extend(print_[start:stop])
    return tuple(out)


def _remember(state: ToolSearchState, entry: _Seen, replaces: _Seen | None = None) -> None:
    old = [e for e in state.seen if e is not entry and e is not replaces]
    while len(old) >= _SEEN_MAX:
        # A catalog that changes every turn must not push out a settled one: the oldest entry
        # without a copy goes first.
        unsettled = [i for i, e in enumerate(old) if e.copy is None]
        del old[unsettled[-1] if unsettled else -1]
    state.seen = (entry, *old)


def _structural_copy(
    definitions: Sequence[Any],
) -> list[dict[str, Any]] | tuple[dict[str, Any], ...] | None:
    """Copies of every dict on the path to an indexed field; the leaves stay shared.

    ``definitions == copy`` then holds only while every indexed field (name, source,
    description, parameter names) equals what it was: the copied dicts cannot change under us,
    and the shared leaves the index reads are immutable strings (any other type indexes as
    empty, whatever it holds). Parameter schemas below ``properties`` are shared by identity:
    nothing in them is indexed. ``None`` when a level is a mapping other than a ``dict``
    (we could not copy it faithfully): such catalogs are read field by field every time.
    Like every memo keyed by values, this trusts ``==``; an object whose ``__eq__`` lies
    about a dict or a string can fool it.
    """
    out: list[dict[str, Any]] = []
    try:
        for definition in definitions:
            if definition.__class__ is not dict:
                return None
            top = definition.copy()
            fn = top.get("function")
            if fn.__class__ is dict:
                fn = top["function"] = fn.copy()
            elif isinstance(fn, Mapping):
                return None
            else:
                fn = top  # a flat definition is its own function
            params = fn.get("parameters")
            if params.__class__ is dict:
                params = fn["parameters"] = params.copy()
                props = params.get("properties")
                if props.__class__ is dict:
                    params["properties"] = props.copy()
                elif isinstance(props, Mapping):
                    return None
            elif isinstance(params, Mapping):
                return None
            out.append(top)
    except Exception:  # noqa: BLE001 - a definition that fails to copy: just no shortcut
        return None
    # Kept in the caller's container type, so the compare needs no conversion next time.
    return out if definitions.__class__ is list else tuple(out)


def _prove(definitions: Sequence[Any], entry: _Seen) -> bool:
    """``definitions`` holds what ``entry.copy`` holds, proven by one C-level ``==``."""
    copy = entry.copy
    assert copy is not None
    try:
        live = definitions if definitions.__class__ is copy.__class__ else copy.__class__(definitions)
        return bool(live == copy)
    except Exception:  # noqa: BLE001 - a comparison that raises proves nothing
        return False


def _read(definitions: Sequence[Any]) -> tuple[Any, ...]:
    """Read the fingerprint field by field.

    A definition in the OpenAI shape adds ``name, source, description, n, param_1..param_n``
    read straight from it (the common case: ~0.3 us a tool, and no per-tool objects, which
    keeps the garbage collector out of the way); any other shape adds ``_ODD, tool_key(...)``.
    The encoding parses back unambiguously (``_segments``) and the index is built from the
    parsed fields, so two catalogs share a fingerprint only when their indexed text is the
    same: a memo hit cannot drift from the live definitions.
    """
    out: list[Any] = []
    extend = out.extend
    for definition in definitions:
        try:
            fn = definition["function"]
            params = fn["parameters"]["properties"].keys()
            head = (fn["name"], definition.get("source"), fn.get("description"), len(params))
        except (KeyError, TypeError, AttributeError, IndexError):
            extend((_ODD, tool_key(definition)))
            continue
        extend(head)  # only once every field was read: a failure never leaves half a segment
        extend(params)
    return tuple(out)


def _segments(print_: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """The per-tool raw keys of a fingerprint: ``(name, source, description, params)`` or
    ``(_ODD, key)``."""
    if print_.__class__ is FrozenTools:
        return [(_ODD, tool_key(definition)) for definition in print_]
    if print_ and print_[0] is _FROZEN:
        return [(_ODD, tool_key(definition)) for definition in print_[1:]]
    return [
        (_ODD, print_[start + 1])
        if print_[start] is _ODD
        else (print_[start], print_[start + 1], print_[start + 2], print_[start + 4 : stop])
        for start, stop in _bounds(print_)
    ]


def _bounds(print_: tuple[Any, ...]) -> list[tuple[int, int]]:
    """Where each definition's part of a plain fingerprint starts and stops."""
    bounds: list[tuple[int, int]] = []
    i, end = 0, len(print_)
    while i < end:
        width = 2 if print_[i] is _ODD else 4 + print_[i + 3]
        bounds.append((i, i + width))
        i += width
    return bounds


def index_for(
    definitions: Sequence[Any],
    print_: tuple[Any, ...] | None = None,
    state: ToolSearchState | None = None,
) -> SearchIndex:
    """The index of ``definitions``, reused when exactly these indexed fields were seen before
    (by ``state``, the host's; without one the index is built afresh).

    ``print_``: their fingerprint when the caller already has it (see ``Classified``)."""
    if state is None:
        state = ToolSearchState()
    if print_ is None:
        print_ = fingerprint(definitions, state)
    recent = state.index_last  # (fingerprint, index) pairs, most recent first, replaced whole
    for entry in recent:
        if entry[0] is print_:  # fingerprint() hands back the same object for a catalog it knows
            return entry[1]
    if recent and print_ == recent[0][0]:
        return recent[0][1]
    memo = state.index_memo
    try:
        index = memo.get(print_)
    except TypeError:  # an unhashable field (a list as description ...): no memo
        return SearchIndex([(_ODD, tool_key(d)) for d in definitions])
    if index is None:
        index = SearchIndex(_segments(print_))  # outside the lock: tokenizing takes _lock
        with state.lock:
            memo[print_] = index
            while len(memo) > _INDEX_MEMO_MAX:
                memo.popitem(last=False)
    else:
        with state.lock:
            if print_ in memo:
                memo.move_to_end(print_)
    state.index_last = ((print_, index), *recent[: _SEEN_MAX - 1])
    return index

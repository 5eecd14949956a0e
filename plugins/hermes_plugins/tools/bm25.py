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

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.plugin import FrozenTools, all_frozen

# The index and its tokenizer live in ``search_index``; ``tokenize`` and ``search_text`` are named here
# too, where callers of the search look for them.
from hermes_plugins.tools.search_index import _INDEX_MEMO_MAX, tool_key
from hermes_plugins.tools.search_index import SearchIndex as SearchIndex
from hermes_plugins.tools.search_index import search_text as search_text
from hermes_plugins.tools.search_index import tokenize as tokenize
from hermes_plugins.tools.state import ToolSearchState, _Seen

_ODD = object()  # marks a definition read the slow way
_FROZEN = object()  # marks a fingerprint made of frozen definitions


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

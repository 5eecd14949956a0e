"""What tool search remembers between calls, owned by a plugin host (``host.state``).

Every entry is keyed by what it was computed from (fingerprints of the indexed fields, the
identity of frozen definitions, the defer list), so a hit never differs from a recomputation:
the state only makes repeated turns cheap. A hook looks it up once per call from its ctx's host
(``state_of``) and passes it down; a function called without one gets a fresh state, so
nothing is remembered between calls that have no host.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from hermes_plugins.tools.search_index import SearchIndex

# The records the state keeps live here, below ``bm25`` and ``catalog``, which fill them.


@attrs.define(slots=True)
class _Seen:
    """The catalog fingerprinted last: its fingerprint and, once it came back unchanged, a copy
    that proves it unchanged with one ``==`` (see ``_structural_copy``)."""

    print_: tuple[Any, ...]
    copy: list[dict[str, Any]] | tuple[dict[str, Any], ...] | None = None


@attrs.frozen(kw_only=True)
class Classified:
    """The live definitions split for one assembly (bridge definitions already dropped)."""

    visible: tuple[Mapping[str, Any], ...]
    deferred: tuple[Mapping[str, Any], ...]
    bridge: tuple[Mapping[str, Any], ...]
    #: The deferred tools' names, in order (read while splitting: no second pass).
    deferred_names: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    #: The search fingerprint of ``deferred`` when it is already known (a settled catalog),
    #: so the listing and the index need not check the deferred tools again this turn.
    deferred_print: tuple[Any, ...] | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class _Positions:
    """Where a settled plain catalog's tools went, by index, with what else the split read.

    Each part is also kept as runs of consecutive positions (``slice`` objects, ``None`` when
    there are too many runs to be worth it): a part is then cut out of the live list with a
    few C-level slices instead of one ``__getitem__`` call per tool."""

    print_: tuple[Any, ...]
    defer: frozenset[str]
    visible: tuple[int, ...]
    deferred: tuple[int, ...]
    bridge: tuple[int, ...]
    names: tuple[str, ...]
    deferred_print: tuple[Any, ...]
    runs: tuple[tuple[slice, ...] | None, ...] = ()


class ToolSearchState:
    """The memos of one host's tool search (see ``bm25``, ``catalog`` and ``assembly``).

    Tuples and single slots are replaced whole (never edited in place), so a reader on another
    thread always sees a consistent value; the ordered memos are edited under ``lock``.
    """

    __slots__ = (
        "lock", "index_memo", "index_last", "seen", "listing_memo", "listing_last",
        "last_frozen", "plain_splits", "turns", "watched",
        "frozen_assembly",
        "__weakref__",
    )

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: bm25: fingerprint -> index (LRU), and the indexes used last, checked by identity.
        self.index_memo: OrderedDict[tuple[Any, ...], SearchIndex] = OrderedDict()
        self.index_last: tuple[tuple[tuple[Any, ...], SearchIndex], ...] = ()
        #: bm25: the catalogs fingerprinted last, most recent first.
        self.seen: tuple[_Seen, ...] = ()
        #: assembly: (fingerprint, budget) -> rendered listing (LRU), and the ones used last.
        self.listing_memo: OrderedDict[Any, tuple[str | None, str]] = OrderedDict()
        self.listing_last: tuple[tuple[tuple[Any, ...], int, tuple[str | None, str]], ...] = ()
        #: catalog: the last split of a frozen catalog, and where the tools of settled plain
        #: catalogs went (a split is cut from the live list by position each turn).
        self.last_frozen: tuple[tuple[Any, ...], frozenset[str], Classified] | None = None
        self.plain_splits: tuple[_Positions, ...] = ()
        #: catalog: the split each session's assembly made this turn, by ``id(session)``
        #: (``catalog.remember_turn``: a finalizer drops it with the session).
        self.turns: dict[int, tuple[Any, frozenset[str], Classified]] = {}
        self.watched: set[int] = set()
        #: assembly: the last assembly of a frozen catalog (catalog, settings, window, its
        #: ``AssemblyResult.turn``, (split, budget, listing, form)), reused by identity.
        self.frozen_assembly: tuple[Any, ...] | None = None


def state_of(host: Any) -> ToolSearchState:
    """``host``'s tool-search state; a fresh one when ``host`` is ``None``."""
    if host is None:
        return ToolSearchState()
    return host.state(ToolSearchState)  # type: ignore[no-any-return]

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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the modules below import this one
    from hermes_plugins.tools.bm25 import SearchIndex, _Seen
    from hermes_plugins.tools.catalog import Classified, _Positions


class ToolSearchState:
    """The memos of one host's tool search (see ``bm25``, ``catalog`` and ``assembly``).

    Tuples and single slots are replaced whole (never edited in place), so a reader on another
    thread always sees a consistent value; the ordered memos are edited under ``lock``.
    """

    __slots__ = (
        "lock", "index_memo", "index_last", "seen", "listing_memo", "listing_last",
        "last_frozen", "plain_splits", "turns", "watched", "recent",
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
        #: (``catalog.remember_turn``: a finalizer drops it with the session), and per thread
        #: the split ``classify`` made last.
        self.turns: dict[int, tuple[Any, frozenset[str], Classified]] = {}
        self.watched: set[int] = set()
        self.recent = threading.local()
        #: assembly: the last assembly of a frozen catalog (catalog, settings, window, the
        #: split ``classify`` made, (split, budget, listing, form)), reused by identity.
        self.frozen_assembly: tuple[Any, ...] | None = None


def state_of(host: Any) -> ToolSearchState:
    """``host``'s tool-search state; a fresh one when ``host`` is ``None``."""
    if host is None:
        return ToolSearchState()
    return host.state(ToolSearchState)  # type: ignore[no-any-return]

"""The cyclic garbage collector around a forced compression's local work.

``Session.compress`` runs in ``collector_paused``; whatever inside it waits on something else
(a summariser that is not the offline one, the compaction lease, a store that may write over
the network, plugins' prompt hooks) runs in ``collector_resumed``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["collector_paused", "collector_resumed"]

#: Whether the collector is paused by ``collector_paused`` in this context (not by the host).
_ours: ContextVar[bool] = ContextVar("hermes_collector_paused", default=False)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for the local work of a forced compression, then the
    young generation collected once.

    A compaction of 100k messages allocates lists of 100k entries (the pass's columns, the
    kept positions, the output) and a young collection traverses every item of a young list,
    touching the header of each of the host's message dicts: set off every 700 allocations,
    those collections cost 0.6-0.9x issue 13's reference pass at 100k. Nearly everything the
    work drops is freed by reference counting; the young collection at the end of the block
    frees the rest and traverses what survived once, inside the call rather than at the host's
    next allocation.

    Whatever inside the block waits on something else - a summariser that is not the offline
    one, the wait for the compaction lease, the session store's reads and writes, an archive
    store that does not say its ``archive_put`` is local, the prompt rebuild (plugins' hooks) -
    runs in ``collector_resumed``, so the host's other threads never go long without a
    collector; an engine that does not say ``compress_is_local`` runs with it too. A collector
    the host paused stays paused; when another thread resumes it meanwhile, the rest of the
    call simply runs with it.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    token = _ours.set(paused)
    try:
        yield
    finally:
        _ours.reset(token)
        if paused:
            gc.enable()
            gc.collect(0)  # what survived the call, traversed once here, not at a later allocation


@contextmanager
def collector_resumed() -> Iterator[None]:
    """Inside ``collector_paused`` (ours, in this context): the collector runs for the block - a
    call that waits on a provider, a store or another worker (seconds to minutes) - and is
    paused again after it. Anywhere else, nothing."""
    if not _ours.get() or gc.isenabled():
        yield
        return
    gc.enable()
    try:
        yield
    finally:
        if _ours.get():
            gc.disable()

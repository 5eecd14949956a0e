"""The in-process LRU of rendered skills indexes.

A hit makes no system call: the key holds no file state, only the session's inputs (skill
directories, tools, toolsets, platforms, disabled names, compacted categories, budget). What
lets it notice changes on disk is a *generation* counter: whoever changes skills in this
process (a skill-management tool, a reload command, a test) calls ``invalidate()``, which bumps
the generation and empties the cache; a build that started under an older generation cannot
store its (possibly stale) result afterwards. Other processes' edits (a skill installed by
hand while a gateway runs) are picked up once an entry is older than ``max_age`` seconds
(``skills.index_ttl_seconds``): the next lookup misses and the rebuild revalidates the disk
snapshot's manifest. Reading the monotonic clock is not a system call (vDSO).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

#: Rendered indexes kept per process (8 in the reference this follows; 32 in newer upstream).
DEFAULT_CAPACITY = 8

V = TypeVar("V")


class IndexCache(Generic[V]):
    """A thread-safe LRU with a generation counter."""

    __slots__ = ("_entries", "_lock", "capacity", "generation")

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._entries: OrderedDict[Hashable, tuple[V, float]] = OrderedDict()
        self._lock = threading.Lock()
        self.capacity = capacity
        self.generation = 0

    def get(self, key: Hashable, max_age: float | None = None) -> V | None:
        """The cached value, or ``None`` when absent or older than ``max_age`` seconds."""
        lock = self._lock
        lock.acquire()  # not ``with``: this is the hit path, and the protocol costs ~100 ns
        try:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if max_age is not None and time.monotonic() - entry[1] > max_age:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry[0]
        finally:
            lock.release()

    def put(self, key: Hashable, value: V, generation: int) -> bool:
        """Store ``value`` unless the cache was invalidated since ``generation`` was read."""
        with self._lock:
            if generation != self.generation:
                return False
            self._entries[key] = (value, time.monotonic())
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return True

    def invalidate(self) -> None:
        with self._lock:
            self.generation += 1
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

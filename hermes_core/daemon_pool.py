"""A small executor whose threads never hold up the interpreter's exit.

The prompt hooks run on a worker pool so that a plugin that hangs costs its block, not the
host. ``concurrent.futures.ThreadPoolExecutor`` joins its threads when the interpreter exits,
so a hook that never returns would still hang the host, at exit instead of at build time. These
workers are daemon threads: at exit they are dropped with whatever they were stuck in. A forked
child starts its own workers (the parent's threads do not exist there).
"""

from __future__ import annotations

import concurrent.futures
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

_Item = tuple["concurrent.futures.Future[Any]", Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class DaemonPool(concurrent.futures.Executor):
    """At most ``max_workers`` daemon threads, started when work finds none idle."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._reset()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _reset_in_child(ref))

    def _reset(self) -> None:
        # A fork may have caught a worker holding the lock or inside the queue: the child gets
        # new ones (and no workers: the parent's threads do not exist there).
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0  # workers waiting for work and not yet promised to a submit

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            self._queue.put((future, fn, args, kwargs))
            if self._idle > 0:
                self._idle -= 1
            elif self._threads < self._max:
                self._threads += 1
                threading.Thread(
                    target=self._work, args=(self._queue,), name=f"{self._prefix}_{self._threads - 1}",
                    daemon=True,
                ).start()
        return future

    def _work(self, work: queue.SimpleQueue[_Item]) -> None:
        while True:
            _run(work.get())  # its locals go with it: nothing of a finished job is held
            with self._lock:
                # Counted before the next get: a submit meanwhile sees a worker on its way
                # and queues instead of starting one (past the bound nothing starts anyway).
                self._idle += 1


def _run(item: _Item) -> None:
    future, fn, args, kwargs = item
    if not future.set_running_or_notify_cancel():
        return  # cancelled while queued: the caller gave up on it
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the caller's future carries it
        future.set_exception(exc)
    else:
        future.set_result(result)


def _reset_in_child(ref: weakref.ref[DaemonPool]) -> None:
    pool = ref()
    if pool is not None:
        pool._reset()

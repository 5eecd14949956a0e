"""A small executor whose threads never outlive their work nor hold up the interpreter's exit.

``ThreadPoolExecutor`` keeps idle workers for the life of the process and joins them at exit, so
a hook that never returns would hang the host's exit. These workers are daemon threads that
leave when no work is queued (``join_idle`` waits for them); a stuck one is dropped at exit, and
a forked child starts its own.
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
    """At most ``max_workers`` daemon threads, started when work is queued, gone when none is."""

    def __init__(self, max_workers: int, thread_name_prefix: str) -> None:
        self._max = max_workers
        self._prefix = thread_name_prefix
        self._started = 0
        self._reset()
        ref = weakref.ref(self)
        os.register_at_fork(after_in_child=lambda: _reset_in_child(ref))

    def _reset(self) -> None:
        # A fork may have caught a worker holding the lock or inside the queue: the child gets
        # new ones (and no workers: the parent's threads do not exist there).
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[_Item] = queue.SimpleQueue()
        self._threads = 0
        self._leaving: list[threading.Thread] = []  # done with their last job, about to return

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[_T]:
        future: concurrent.futures.Future[_T] = concurrent.futures.Future()
        with self._lock:
            self._queue.put((future, fn, args, kwargs))
            if self._threads < self._max:
                self._threads += 1
                self._started += 1
                threading.Thread(
                    target=self._work, name=f"{self._prefix}_{self._started - 1}", daemon=True,
                ).start()
        return future

    def join_idle(self, timeout: float = 1.0) -> None:
        """Wait for the workers that finished their last job to return (those still running a
        job are left alone: a hook past its budget is the caller's to abandon)."""
        with self._lock:
            leaving, self._leaving = self._leaving, []
        me = threading.current_thread()
        for thread in leaving:
            if thread is not me:
                thread.join(timeout)

    def _work(self) -> None:
        work = self._queue
        while True:
            try:
                item = work.get_nowait()
            except queue.Empty:
                with self._lock:
                    if work is not self._queue or work.empty():
                        self._threads -= 1
                        return
                continue
            future, fn, args, kwargs = item
            del item
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued: the caller gave up on it
            try:
                outcome: Any = fn(*args, **kwargs)
                failed = False
            except BaseException as exc:  # noqa: BLE001 - the caller's future carries it
                outcome, failed = exc, True
            del fn, args, kwargs  # nothing of a finished job is held while the next one runs
            with self._lock:
                # Decided before the caller hears back, so a caller that closes right after
                # its result finds this thread among the leaving ones and can join it.
                leaving = work is self._queue and work.empty()
                if leaving:
                    self._threads -= 1
                    self._leaving = [t for t in self._leaving if t.is_alive()]  # never joined: bounded
                    self._leaving.append(threading.current_thread())
            if failed:
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
            del future, outcome
            if leaving:
                return


def _reset_in_child(ref: weakref.ref[DaemonPool]) -> None:
    pool = ref()
    if pool is not None:
        pool._reset()

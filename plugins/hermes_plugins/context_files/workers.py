"""Daemon threads that run file reads, so a hung file system costs a timeout, not the session.

Threads are kept between reads (starting one per file cost more than the read itself on a
small machine) and are daemons, so a read stuck forever on a dead network mount never keeps
the interpreter from exiting. A worker stuck in such a read is simply never idle again; the
next job starts a fresh worker.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

_lock = threading.Lock()
_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_idle = 0


def _work() -> None:
    global _idle
    while True:
        job = _jobs.get()
        job()  # jobs catch their own errors; a worker never dies
        with _lock:
            _idle += 1


def submit(job: Callable[[], None]) -> None:
    """Run ``job`` on an idle worker, or on a new one when none is idle."""
    global _idle
    with _lock:
        if _idle:
            _idle -= 1
        else:
            threading.Thread(target=_work, name="hermes-context-file-read", daemon=True).start()
    _jobs.put(job)


def _after_fork() -> None:
    # The child has none of the parent's threads: forget them and their queue.
    global _idle, _jobs, _lock
    _lock = threading.Lock()
    _jobs = queue.SimpleQueue()
    _idle = 0


os.register_at_fork(after_in_child=_after_fork)

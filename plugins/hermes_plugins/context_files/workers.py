"""One daemon thread per file read, so a hung file system costs a timeout, not the session.

The caller waits for the thread to end (at most the timeout), so no read thread outlives the
read that started it: a closed session leaves none behind, and nothing is kept between reads
(no pool, no state to reset in a forked child). A read stuck forever on a dead network mount is
abandoned after the timeout; its thread is a daemon, so it never keeps the interpreter from
exiting, and it ends by itself if the read ever returns.

Starting a thread per read costs some tens of microseconds more than handing the read to a
kept worker (docs/performance.md, "Context files"); a build reads a handful of files.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

_T = TypeVar("_T")

THREAD_NAME = "hermes-context-file-read"


class TimedOut(Exception):
    """The read did not finish within the timeout; its thread was left to end on its own."""


def run_with_timeout(read: Callable[[], _T], timeout: float) -> _T:
    """``read()``'s result (or its exception), run on a new daemon thread and waited for at
    most ``timeout`` seconds; ``TimedOut`` past it."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = read()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller as is
            box["error"] = exc

    thread = threading.Thread(target=run, name=THREAD_NAME, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise TimedOut
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]

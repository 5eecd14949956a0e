"""One compaction of a session at a time, across threads, processes and machines.

With a store that supports leases (SQLite, Redis), ``compaction_lease`` takes one with a random
token and an expiry, renews it from a background thread while the engine runs and releases it by
compare-and-delete; a worker that finds it held waits ``session_store.lease_wait_seconds``, then
goes on without compacting, with a warning (docs/stores.md).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hermes_core.diagnostics import record_warning
from hermes_core.logging import get_logger

log = get_logger("hermes_core.lease")

POLL_SECONDS = 0.05


class LeaseHeld(RuntimeError):
    """Another worker is compacting the session."""


class LeaseUnavailable(LeaseHeld):
    """The store could not be asked (a lost connection): no compaction without a lease."""


def supports_leases(store: Any) -> bool:
    return store is not None and all(
        callable(getattr(store, m, None)) for m in ("acquire_lease", "renew_lease", "release_lease")
    )


@contextmanager
def compaction_lease(store: Any, session_id: str, *, ttl: float, wait: float) -> Iterator[None]:
    """Hold the session's compaction lease for the block; ``LeaseHeld`` when it stays taken
    for ``wait`` seconds. A store without leases (or none) makes this a no-op."""
    if not supports_leases(store):
        yield
        return
    token = secrets.token_hex(16)
    ttl_ms = max(100, int(ttl * 1000))
    deadline = time.monotonic() + max(0.0, wait)
    while True:
        try:
            if store.acquire_lease(session_id, token, ttl_ms):
                break
        except Exception as exc:  # noqa: BLE001 - unreachable store: skip, never compact unguarded
            raise LeaseUnavailable(f"{type(exc).__name__}: {exc}") from exc
        if time.monotonic() >= deadline:
            raise LeaseHeld(session_id)
        time.sleep(POLL_SECONDS)
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(ttl / 3):
            try:
                if not store.renew_lease(session_id, token, ttl_ms):
                    log.warning("compaction_lease_lost", session=session_id)
                    return
            except Exception:  # noqa: BLE001 - the lease expires on its own
                log.warning("compaction_lease_renew_failed", session=session_id, exc_info=True)

    renewer = threading.Thread(target=renew, name=f"hermes-lease-{session_id}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join(timeout=5)
        try:
            store.release_lease(session_id, token)
        except Exception:  # noqa: BLE001 - it expires after ttl
            log.warning("compaction_lease_release_failed", session=session_id, exc_info=True)


def warn_unlocked(session_id: str, error: LeaseUnavailable) -> None:
    """The host warning for a compaction run locally because the store could not be asked for
    the lease: the request's fit outranks the store (another worker may compact it too)."""
    record_warning(
        "compaction_without_lease",
        f"the session store could not be reached to lock session {session_id} for compaction "
        f"({error}); compacted locally without the lease so the request still fits",
        session_id=session_id,
    )


def warn_held(session_id: str, wait: float, error: LeaseHeld | None = None) -> tuple[str, str]:
    """Record the host warning for a compaction skipped because another worker holds the
    lease and return ``(reason, message)`` (reason ``lease_held``) for the status event."""
    message = (
        f"session {session_id} is being compacted by another worker (waited {wait:g} s); "
        "this request is served without compaction"
    )
    record_warning("compaction_skipped_lease_held", message, session_id=session_id)
    return "lease_held", message

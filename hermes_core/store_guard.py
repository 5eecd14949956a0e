"""A remote session store on a per-turn time budget: the request's correctness outranks the store.

A store with ``remote = True`` is wrapped in ``BudgetedStore``: every call of one turn shares
``session_store.turn_budget_seconds``, runs on a worker thread and is abandoned when the budget
runs out; it and every later call of the turn raise ``StoreError``, which callers turn into a
local compaction, an in-memory archive and one warning (docs/stores.md). SQLite is not wrapped.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Callable
from typing import Any

from hermes_core.daemon_pool import DaemonPool
from hermes_core.errors import HermesError, StoreError

__all__ = ["BudgetedStore", "TurnBudget", "budgeted"]

#: Store calls in flight at once across the process (the rest queue).
_WORKERS = 8
_pool = DaemonPool(_WORKERS, thread_name_prefix="hermes-store")


class TurnBudget:
    """Seconds of store time one turn may spend, all calls together."""

    def __init__(self, seconds: float) -> None:
        self.seconds = max(0.0, float(seconds))
        self._local = threading.local()  # each thread's turn: concurrent turns do not share one

    def start_turn(self) -> None:
        self._local.deadline = time.monotonic() + self.seconds
        self._local.spent = False

    def remaining(self) -> float:
        deadline: float | None = getattr(self._local, "deadline", None)
        if deadline is None:  # a call outside any turn (open, close): a budget of its own
            return self.seconds
        return max(0.0, deadline - time.monotonic())

    def spend(self) -> None:
        self._local.spent = True

    @property
    def spent(self) -> bool:
        return bool(getattr(self._local, "spent", False))


class BudgetedStore:
    """The store's methods, each bounded by what is left of the turn's budget."""

    def __init__(self, store: Any, budget: TurnBudget) -> None:
        self._store = store
        self._budget = budget

    @property
    def wrapped(self) -> Any:
        return self._store

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if name.startswith("_") or not callable(value):
            return value
        return self._bounded(name, value)

    def _bounded(self, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        budget = self._budget
        label = getattr(self._store, "label", None) or type(self._store).__name__

        def call(*args: Any, **kwargs: Any) -> Any:
            if budget.spent:
                raise StoreError(f"{label}: skipped ({name}): this turn's store budget is spent", store=label)
            # In the caller's context: a store's own warnings reach this step's Session.warnings.
            future = _pool.submit(contextvars.copy_context().run, method, *args, **kwargs)
            try:
                return future.result(timeout=budget.remaining())
            except HermesError:
                raise
            except concurrent.futures.TimeoutError:
                future.cancel()
                budget.spend()
                raise StoreError(
                    f"{label}: no answer to {name} within the turn's store budget "
                    f"({budget.seconds:g} s, session_store.turn_budget_seconds)", store=label,
                ) from None
            except Exception as exc:  # a driver's own error: the host sees ours, naming the store
                raise StoreError(f"{label}: {name} failed: {type(exc).__name__}: {exc}", store=label) from exc

        call.__name__ = name
        return call

    def __repr__(self) -> str:
        return f"BudgetedStore({self._store!r})"


def budgeted(store: Any, seconds: float) -> tuple[Any, TurnBudget | None]:
    """``store`` wrapped when it says it is remote, with the budget its calls share."""
    if store is None or getattr(store, "remote", False) is not True:
        return store, None
    budget = TurnBudget(seconds)
    return BudgetedStore(store, budget), budget


def join_idle() -> None:
    """Wait for the store workers on their way out (``Session.close``)."""
    _pool.join_idle()

"""A session's system prompt in the session store: replayed while it still fits, stored masked.

A worker opening a known session id replays the stored bytes (the prefix cache stays warm)
unless its Model/Provider lines disagree (spec §14) or secrets were masked in it. A failing
store costs the reuse, never the session: a warning, and the prompt is rebuilt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_core.assembler import BuiltPrompt, stored_prompt
from hermes_core.diagnostics import record_warning
from hermes_core.logging import get_logger
from hermes_core.stored_copy import stored_copy, warn_masked, was_masked

__all__ = ["last_labelled_value", "restore_prompt", "stable_prefix", "stale_reason", "store_prompt"]

log = get_logger("hermes_core.session")


def last_labelled_value(prompt: str, label: str) -> str | None:
    """The value of the last line of ``prompt`` that starts with ``<label>:``."""
    prefix = label + ":"
    value: str | None = None
    for line in prompt.splitlines():
        if line.startswith(prefix):
            value = line[len(prefix):].strip()
    return value


def stale_reason(prompt: str, *, model: str, provider: str) -> str | None:
    """Why a stored prompt no longer fits the runtime, or ``None`` when it does (spec §14).

    Only a disagreement between two non-empty values counts: a prompt without a Model line, or
    a session opened without a model, cannot prove the prompt stale.
    """
    for label, current in (("Model", model), ("Provider", provider)):
        stored = last_labelled_value(prompt, label)
        current = (current or "").strip()
        if stored and current and stored != current:
            return f"{label.lower()} changed from {stored!r} to {current!r}"
    return None


def stable_prefix(built: BuiltPrompt) -> str:
    """The stable layer of a fresh build when the prompt starts with it, else ``""``."""
    stable = built.layers.get("stable", "")
    return stable if stable and built.prompt.startswith(stable) else ""


def _read_stored(store: Any, session_id: str) -> str | None:
    try:
        stored = store.get_prompt(session_id)
    except Exception as exc:  # noqa: BLE001 - a broken store costs the reuse, not the session
        record_warning(
            "session_store_read_failed",
            f"could not read the stored prompt of session {session_id}: "
            f"{type(exc).__name__}: {exc}; rebuilding",
            session_id=session_id,
        )
        return None
    return stored if isinstance(stored, str) else None


def _read_stored_prefix(store: Any, session_id: str, limit: int) -> int:
    # Optional store capability: the split point kept with the prompt (see the hookspec).
    reader = getattr(store, "get_static_prefix", None)
    if not callable(reader):
        return 0
    try:
        chars = reader(session_id)
    except Exception:  # noqa: BLE001 - without it the replay is one block: still correct
        return 0
    return chars if isinstance(chars, int) and 0 < chars <= limit else 0


def restore_prompt(
    store: Any, session_id: str, *, model: str, provider: str, tokenizer: Callable[[], Any]
) -> tuple[str, BuiltPrompt, int] | None:
    """``(prompt, built, stable prefix chars)`` of the stored prompt when it may be replayed,
    else ``None`` (nothing stored, unreadable, stale or masked: the caller builds)."""
    stored = _read_stored(store, session_id)
    if not stored:
        return None
    reason = stale_reason(stored, model=model, provider=provider)
    if reason is None and was_masked(stored):
        reason = "the stored copy has secrets masked"
    if reason is not None:
        log.info("stored_prompt_stale", session_id=session_id, reason=reason)
        return None
    built = stored_prompt(stored, model=model, tokenizer=tokenizer())
    log.info("stored_prompt_reused", session_id=session_id, chars=len(stored))
    return stored, built, _read_stored_prefix(store, session_id, len(stored))


def store_prompt(store: Any, session_id: str, built: BuiltPrompt, *, model: str, provider: str) -> None:
    """Store a freshly built prompt, users' secrets masked (the live prompt keeps them)."""
    copy = stored_copy(built, built.prompt, stable_prefix(built))
    warn_masked(copy, where=repr(store))
    try:
        if callable(getattr(store, "get_static_prefix", None)):
            store.put_prompt(session_id, copy.text, model=model, provider=provider,
                             static_prefix=copy.static_prefix)
            return
        store.put_prompt(session_id, copy.text, model=model, provider=provider)
    except Exception as exc:  # noqa: BLE001 - the prompt is still good for this process
        record_warning(
            "session_store_write_failed",
            f"could not store the prompt of session {session_id}: "
            f"{type(exc).__name__}: {exc}; it will be rebuilt by the next process",
            session_id=session_id,
        )

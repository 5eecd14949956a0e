"""What the host is told about compaction: events of automatic ones, the answer to /compress.

``CompactionEvent`` goes to ``on_status`` (a host UI's line: "context compacted: 182k -> 41k
tokens"); ``Session.compress`` returns a ``ManualCompression`` whose ``CompressionFeedback`` is
the text the reference prints for a manual ``/compress`` (spec §14.1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import attrs

from hermes_core.engine import CompressionReport

__all__ = ["CompactionEvent", "CompressionFeedback", "ManualCompression", "Phase", "summarize_manual"]

Phase = Literal["preflight", "post_response", "overflow", "manual"]


@attrs.frozen(kw_only=True)
class CompactionEvent:
    """What a host UI shows about one automatic compression or one blocked attempt.

    ``kind``: ``compacted`` (messages replaced), ``would_not_fit`` (compacted, further passes
    too, and the request counted after it is still over the threshold), ``fallback``
    (compacted with the deterministic handoff because the summariser failed), ``aborted`` (summariser failed; nothing dropped),
    ``ineffective`` (ran but saved too little), ``blocked`` (over the threshold but compression
    is blocked: ``reason`` is ``ineffective`` or ``cooldown:<seconds>``), ``thrashing`` (too many
    compressions in the last turns), ``skipped`` (the session's compaction lease could not be
    had, so the request is served uncompacted: ``reason`` is ``lease_held`` when another worker
    held it past ``session_store.lease_wait_seconds``, ``store_unreachable`` when the session
    store could not be asked; a ``compaction_skipped_*`` host warning says the same).
    """

    kind: str
    phase: Phase
    message: str
    before_tokens: int = 0
    after_tokens: int = 0
    before_messages: int = 0
    after_messages: int = 0
    dropped_messages: int = 0
    reason: str | None = None
    counter: str = "estimate"


@attrs.frozen(kw_only=True)
class CompressionFeedback:
    """The answer to a manual ``/compress`` (spec §14.1), ready to show the user."""

    noop: bool
    aborted: bool
    refused_would_grow: bool
    fallback_used: bool
    headline: str
    token_line: str
    note: str | None
    before_count: int
    after_count: int
    before_tokens: int
    after_tokens: int
    dropped_count: int
    failure_reason: str | None

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.headline, self.token_line, self.note) if part)


@attrs.frozen(kw_only=True)
class ManualCompression:
    """What ``Session.compress`` returns: the messages to continue with and the feedback."""

    messages: list[dict[str, Any]]
    feedback: CompressionFeedback


def summarize_manual(
    before: Sequence[Any], after: Sequence[Any], before_tokens: int, after_tokens: int,
    report: CompressionReport | Mapping[str, Any],
) -> CompressionFeedback:
    """Headline, token line and note for a manual compression (spec §14.1)."""
    n, m = len(before), len(after)
    noop = n == m and list(after) == list(before)  # (no copy of a long history that shrank)
    typed = CompressionReport.coerce(report)
    aborted, refused, fallback, error = (
        typed.aborted, typed.refused_would_grow, typed.fallback_used, typed.error
    )
    dropped = typed.dropped_count if typed.dropped_count is not None else max(n - m, 0)
    if refused:
        headline = f"Compression refused (summary would grow the conversation): {n} messages preserved"
    elif aborted:
        headline = f"Compression aborted: {n} messages preserved"
    elif fallback:
        headline = f"Compressed with fallback: {n} → {m} messages"
    elif noop:
        headline = f"No changes from compression: {n} messages"
    else:
        headline = f"Compressed: {n} → {m} messages"
    if (noop and before_tokens == after_tokens) or refused:
        token_line = f"Approx request size: ~{before_tokens:,} tokens (unchanged)"
    else:
        token_line = f"Approx request size: ~{before_tokens:,} → ~{after_tokens:,} tokens"
    note: str | None = None
    if refused:
        note = "The summary would have been larger than what it replaces, so nothing was removed."
    elif aborted:
        note = "The summariser failed, so no messages were removed."
    elif fallback:
        note = (
            "The summariser failed, so a limited deterministic summary was used; "
            f"removed {dropped} message(s)."
        )
    elif m < n and after_tokens > before_tokens:
        note = (
            "There are fewer messages now but the estimate rose: the summary is denser text than "
            "the short messages it replaced, and the rough estimate counts it in full."
        )
    if typed.status == "would_not_fit" and typed.tokens_after is not None:
        unfit = (
            f"Counted after compaction: {typed.tokens_after:,} tokens ({typed.counted_by}), still "
            f"over the threshold of {typed.threshold_tokens or 0:,}: the request does not fit; start "
            "a new session or pick a model with a larger window."
        )
        note = f"{note} {unfit}" if note else unfit
    if error and (aborted or fallback):
        note = f"{note} Reason: {error}" if note else f"Reason: {error}"
    return CompressionFeedback(
        noop=noop, aborted=aborted, refused_would_grow=refused, fallback_used=fallback,
        headline=headline, token_line=token_line, note=note, before_count=n, after_count=m,
        before_tokens=before_tokens, after_tokens=after_tokens, dropped_count=dropped,
        failure_reason=error,
    )

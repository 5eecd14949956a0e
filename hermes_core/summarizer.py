"""The summariser interface: what an engine asks for, and how a summariser may fail.

An engine hands a ``SummaryRequest`` (the redacted middle, serialised, and the LLM prompt) to the
summariser ``compression.summary.provider`` names (factories registered by ``hermes_summarizers``).
Failures are typed for the engine's policy (auth, quota and network abort with nothing dropped;
timeouts start a cooldown; a missing model falls back once): docs/summarizers.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs


@attrs.frozen(kw_only=True)
class SummaryRequest:
    """One summarisation job.

    ``prompt`` is the complete instruction text for an LLM summariser (turns included);
    ``turns`` are the middle messages (redacted copies) for summarisers that work on structure.
    A summariser class that sets ``reads_raw_turns = True`` (the offline ``extractive`` one)
    redacts what it writes itself, and gets the messages as they are and an empty ``prompt``;
    ``previous_summary`` is the body of the last summary when
    this compression updates it; ``budget_tokens`` is the target size; ``max_chars`` a hard cap.
    """

    prompt: str
    turns: Sequence[Mapping[str, Any]] = ()
    previous_summary: str | None = None
    focus_topic: str | None = None
    budget_tokens: int = 2_000
    max_chars: int = 8_000
    model: str | None = None


@runtime_checkable
class Summarizer(Protocol):
    """Anything that turns a ``SummaryRequest`` into summary text (or raises ``SummarizerError``)."""

    name: str

    def summarize(self, request: SummaryRequest) -> str: ...


class SummarizerError(Exception):
    """A summary could not be produced. ``kind`` drives the engine's reaction.

    Kinds: ``auth`` (401/402/403, missing key, quota: abort, nothing dropped), ``network``
    (connection refused/reset: abort), ``timeout`` (408/429/502/504, timed out: cooldown ladder
    60 -> 300 -> 900 s), ``model_not_found`` (404, unknown model: fall back once to the main
    model), ``empty`` (blank response), ``missing_dependency`` (SDK extra not installed),
    ``other`` (60 s cooldown).
    """

    kind: str = "other"

    def __init__(self, message: str, *, kind: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        if kind is not None:
            self.kind = kind
        self.status = status


class SummarizerAuthError(SummarizerError):
    kind = "auth"


class SummarizerNetworkError(SummarizerError):
    kind = "network"


class SummarizerTimeoutError(SummarizerError):
    kind = "timeout"


class SummarizerModelNotFoundError(SummarizerError):
    kind = "model_not_found"


class SummarizerEmptyError(SummarizerError):
    kind = "empty"


class SummarizerMissingDependencyError(SummarizerError):
    kind = "missing_dependency"


ABORTING_KINDS = frozenset({"auth", "network"})

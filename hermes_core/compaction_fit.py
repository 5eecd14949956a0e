"""The counted fit of a compaction's result: does the request fit now, and if not, why.

The rough estimate decides when to compress; whether the result fits is counted with the
model's tokenizer (``tokens.RequestCounter``). Over the threshold, the engine's further passes
run (``ContextEngine.fit_to``, at most ``FIT_ROUNDS``); a request that still does not fit is
said (``compression_would_not_fit``), naming a user message that alone is too large.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.diagnostics import record_warning
from hermes_core.engine import CompressionReport
from hermes_core.tokens import RequestCounter, estimate_messages_tokens, estimate_request_tokens

__all__ = ["FIT_ROUNDS", "oversized_user", "settle_fit"]

#: Rounds of further passes (``ContextEngine.fit_to``) after a compaction counted over the
#: threshold, before the outcome is ``would_not_fit``.
FIT_ROUNDS = 2


def oversized_user(
    counter: RequestCounter, messages: Sequence[Mapping[str, Any]], limit: int
) -> tuple[int, int] | None:
    """``(index, tokens)`` of the largest user message that alone counts over ``limit``
    tokens (margin included). A string of fewer than ``limit / 3`` characters is not counted:
    even emoji and rare scripts stay under three tokens a character."""
    best: tuple[int, int] | None = None
    for i, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str) and len(content) * 3 * (1.0 + counter.margin) < limit:
            continue
        tokens = int(counter.message_tokens(message) * (1.0 + counter.margin))
        if tokens > limit and (best is None or tokens > best[1]):
            best = (i, tokens)
    return best


def settle_fit(
    engine: Any,
    messages: list[dict[str, Any]],
    counter: RequestCounter,
    *,
    further: Callable[[list[dict[str, Any]], int, int], list[dict[str, Any]]],
    fixed_rough: int = 0,
    system_prompt: str = "",
    tools: Sequence[Mapping[str, Any]] | None = None,
    session_id: str | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The counted fit of a compaction's result: ``(messages, fit)``.

    The request (``system_prompt`` + ``messages`` + ``tools``) is counted with ``counter``; over
    ``engine.threshold_tokens``, ``further(messages, target, tokens)`` runs the engine's further
    passes (up to ``FIT_ROUNDS``), with ``target`` the threshold scaled into the engine's own
    estimate of the messages (by how the estimate compares with the count on this very request,
    less ``fixed_rough`` for the system prompt and tools). ``fit`` is ``{tokens_after,
    counted_by, threshold_tokens, fits, fit_rounds}``; it goes into the engine's report mapping
    (``fit``), and when the request still does not fit, the report's status becomes
    ``would_not_fit`` and a ``compression_would_not_fit`` warning says so.
    """
    threshold = int(engine.threshold_tokens)
    first = engine.last_compression_report
    tokens = counter.count(messages, system_prompt=system_prompt, tools=tools)
    rounds = 0
    while threshold > 0 and tokens > threshold and rounds < FIT_ROUNDS:
        rounds += 1
        rough = estimate_request_tokens(messages, system_prompt=system_prompt, tools=tools)
        target = max(1, int(threshold * rough / max(tokens, 1)) - fixed_rough)
        out = further(messages, target, tokens)
        if out is messages:
            break
        messages = out
        tokens = counter.count(messages, system_prompt=system_prompt, tools=tools)
    fits = threshold <= 0 or tokens <= threshold
    method = counter.method + (f" +{counter.margin:.0%} margin" if counter.margin else "")
    fit: dict[str, Any] = {
        "tokens_after": tokens, "counted_by": method, "threshold_tokens": threshold,
        "fits": fits, "fit_rounds": rounds,
    }
    report = engine.last_compression_report
    if isinstance(report, dict):
        if rounds and isinstance(first, dict) and report is not first:
            # The further passes wrote reports of their own: the first run's says what the
            # compaction replaced; what the further passes did is kept inside it (its status
            # read as a CompressionReport; "after" and "phases" are the engine's details, copied).
            passes = CompressionReport.coerce(report)
            first = {**first, "fit_passes": {"status": passes.status, "after": passes.details.get("after"),
                                             "phases": passes.details.get("phases")},
                     "after": {"messages": len(messages), "tokens": estimate_messages_tokens(messages)}}
            engine.last_compression_report = report = first
        report["fit"] = dict(fit)
    if not fits:
        found = oversized_user(counter, messages, threshold)
        message = (
            f"after compaction the request still counts {tokens:,} tokens ({method}), over "
            f"the compression threshold of {threshold:,} tokens"
            + (f"; user message {found[0]} alone is ~{found[1]:,} tokens and is never cut" if found else "")
            + "; start a new session, or pick a model with a larger window"
        )
        if isinstance(report, dict):
            report["status"] = "would_not_fit"
            report.setdefault("warnings", []).append(message)
        record_warning("compression_would_not_fit", message, session_id=session_id, tokens=tokens,
                       threshold=threshold)
    return messages, fit

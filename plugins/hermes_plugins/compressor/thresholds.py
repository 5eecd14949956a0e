"""When to compress and how much to keep: the threshold derivation of the reference (§5).

Everything here is a pure function of the window, the configured ratios and the output
reservation, so the worked examples of the spec can be checked without an engine.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from hermes_core.plugin import MINIMUM_CONTEXT_LENGTH, model_threshold

#: When the 64,000 floor swallows the effective window, trigger at this share of it instead, so
#: small models still use most of their window and compress before the provider refuses.
MIN_CTX_TRIGGER_RATIO = 0.85
#: The summary never targets more than this many tokens (the seed's baseline ceiling).
SUMMARY_TOKENS_CEILING = 12_000
#: ... nor more than this share of the window.
SUMMARY_WINDOW_SHARE = 0.05
TARGET_RATIO_MIN = 0.10
TARGET_RATIO_MAX = 0.80
#: Budgets for a model whose window is not known yet (the reference's fallback window).
UNKNOWN_WINDOW_FALLBACK = 256_000


@attrs.frozen(kw_only=True)
class Thresholds:
    """The figures one ``update_model`` derives; the engine copies them onto itself."""

    threshold_percent: float
    effective_window: int
    threshold_tokens: int
    tail_token_budget: int
    max_summary_tokens: int
    target_ratio: float


def resolve_model_threshold(model: str, overrides: Mapping[str, float], default: float) -> float:
    """The per-model threshold ratio: the longest override key contained in ``model`` wins.

    The rule is the config's (every engine reads it through the ``ContextEngine`` base).
    """
    return model_threshold(model, overrides, default)


def compute_threshold_tokens(context_length: int, percent: float, max_tokens: int | None) -> int:
    """Trigger point in tokens for a window, a ratio and an output reservation.

    The output reservation comes off the window first (providers cut ``max_tokens`` from the
    same window); the ratio result is raised to the 64,000 floor so big windows do not compress
    too early; when that floor reaches the whole effective window, 85% of it is used instead.
    """
    effective = context_length - (max_tokens or 0)
    if effective <= 0:
        effective = context_length
    floored = max(int(effective * percent), MINIMUM_CONTEXT_LENGTH)
    if floored >= effective:
        return max(1, min(int(effective * MIN_CTX_TRIGGER_RATIO), effective - 1))
    return floored


def clamp_target_ratio(ratio: float) -> float:
    return min(max(float(ratio), TARGET_RATIO_MIN), TARGET_RATIO_MAX)


def derive_thresholds(
    context_length: int,
    percent: float,
    *,
    max_tokens: int | None = None,
    cap: int | None = None,
    target_ratio: float = 0.20,
) -> Thresholds:
    """All the engine's size figures for one window (§5, steps 5-8 of the derivation)."""
    reserve = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else None
    effective = context_length - (reserve or 0)
    if effective <= 0:
        effective = context_length
    threshold = compute_threshold_tokens(context_length, percent, reserve)
    if cap is not None and cap > 0:
        bounded = min(cap, context_length)
        if bounded < threshold:
            threshold = bounded
    ratio = clamp_target_ratio(target_ratio)
    return Thresholds(
        threshold_percent=float(percent),
        effective_window=effective,
        threshold_tokens=threshold,
        tail_token_budget=int(threshold * ratio),
        max_summary_tokens=min(int(context_length * SUMMARY_WINDOW_SHARE), SUMMARY_TOKENS_CEILING),
        target_ratio=ratio,
    )

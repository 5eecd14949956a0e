"""Thresholds (§5): the derivation and its worked examples (the "base" column)."""

from __future__ import annotations

import pytest

from hermes_core.config import Config, load_config
from hermes_plugins.compressor.engine import CompressorEngine
from hermes_plugins.compressor.thresholds import (
    compute_threshold_tokens,
    derive_thresholds,
    resolve_model_threshold,
)


def engine_for(data: dict | None = None) -> CompressorEngine:
    config = load_config(data=data or {}, env={}) if data else Config()
    return CompressorEngine(config=config)


@pytest.mark.parametrize(
    "context_length, max_tokens, expected",
    [
        (1_000_000, None, 500_000),
        (200_000, None, 100_000),
        (128_000, None, 64_000),
        (64_000, None, 54_400),  # the 64,000 floor swallows the window: 85% rule
        (100_000, 65_536, 29_294),  # effective window 34,464
    ],
)
def test_worked_examples_base_column(context_length: int, max_tokens: int | None, expected: int) -> None:
    assert compute_threshold_tokens(context_length, 0.50, max_tokens) == expected
    engine = engine_for()
    engine.update_model("some-model", context_length, max_tokens=max_tokens)
    assert engine.threshold_tokens == expected


def test_non_positive_effective_window_falls_back_to_the_window() -> None:
    # max_tokens >= window: the reservation is ignored rather than making the window negative.
    assert compute_threshold_tokens(100_000, 0.5, 200_000) == compute_threshold_tokens(100_000, 0.5, None)


def test_tiny_window_still_triggers_below_it() -> None:
    assert compute_threshold_tokens(2_000, 0.5, None) == 1_700
    assert compute_threshold_tokens(1, 0.5, None) == 1


def test_absolute_cap_lowers_but_never_raises() -> None:
    assert derive_thresholds(200_000, 0.5, cap=80_000).threshold_tokens == 80_000
    assert derive_thresholds(200_000, 0.5, cap=150_000).threshold_tokens == 100_000
    # The cap is clamped to the window first.
    assert derive_thresholds(50_000, 0.9, cap=10_000_000).threshold_tokens == 42_500
    engine = engine_for({"compression": {"threshold_tokens": 70_000}})
    engine.update_model("m", 200_000)
    assert engine.threshold_tokens == 70_000


def test_tail_budget_is_threshold_times_clamped_ratio() -> None:
    assert derive_thresholds(200_000, 0.5, target_ratio=0.20).tail_token_budget == 20_000
    assert derive_thresholds(200_000, 0.5, target_ratio=0.01).tail_token_budget == 10_000
    assert derive_thresholds(200_000, 0.5, target_ratio=0.95).tail_token_budget == 80_000


def test_summary_ceiling_is_five_percent_of_window_at_most_12000() -> None:
    assert derive_thresholds(1_000_000, 0.5).max_summary_tokens == 12_000
    assert derive_thresholds(200_000, 0.5).max_summary_tokens == 10_000
    assert derive_thresholds(64_000, 0.5).max_summary_tokens == 3_200


def test_model_override_longest_substring_wins() -> None:
    overrides = {"gpt": 0.6, "gpt-4o": 0.7, "claude": 0.8}
    assert resolve_model_threshold("openai/gpt-4o-mini", overrides, 0.5) == 0.7
    assert resolve_model_threshold("gpt-3.5", overrides, 0.5) == 0.6
    assert resolve_model_threshold("llama", overrides, 0.5) == 0.5
    assert resolve_model_threshold("", overrides, 0.5) == 0.5


def test_update_model_reresolves_from_the_config_percent() -> None:
    engine = engine_for({"compression": {"threshold": 0.5, "model_thresholds": {"big": 0.8}}})
    engine.update_model("big-model", 1_000_000)
    assert engine.threshold_percent == 0.8
    assert engine.threshold_tokens == 800_000
    engine.update_model("small-model", 1_000_000)
    assert engine.threshold_percent == 0.5
    assert engine.threshold_tokens == 500_000


def test_update_model_keeps_max_tokens_unless_given() -> None:
    engine = engine_for()
    engine.update_model("m", 100_000, max_tokens=65_536)
    assert engine.threshold_tokens == 29_294
    engine.update_model("m", 100_000)
    assert engine.threshold_tokens == 29_294
    assert engine.tail_token_budget == int(29_294 * 0.2)


def test_unknown_window_keeps_context_length_zero_but_sizes_for_the_fallback(capture_events: list) -> None:
    engine = engine_for()
    engine.update_model("mystery", 0)
    assert engine.context_length == 0
    assert engine.threshold_tokens == 128_000
    assert not any(e["event"] == "compression_window_unknown" for e in capture_events)
    engine.should_compress_info(1_000)  # the first decision warns, once
    engine.should_compress_info(2_000)
    assert [e["event"] for e in capture_events].count("compression_window_unknown") == 1
    assert engine.get_status()["usage_percent"] == 0

"""Counting, model data, engine base class and logger paths the rest of the suite never
reached: unusual content shapes, plugin tokenizers without ``count_many``, usage oddities, the
base engine's defaults, the logger's level gates and tracebacks."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_core import Config, Session
from hermes_core.engine import CompressionReport, ContextEngine, coerce_usage
from hermes_core.logging import EventFormatter, get_logger, stdlib_name
from hermes_core.model_data import ModelInfo, lookup
from hermes_core.tokens import (
    IMAGE_TOKEN_ESTIMATE,
    RequestCounter,
    counting_method,
    estimate_message_tokens,
    payload_size,
)

# --- tokens ----------------------------------------------------------------------------------


def test_a_medium_nested_in_a_payload_counts_as_one_medium() -> None:
    block = {"type": "tool_result", "content": [{"type": "image", "source": {"data": "A" * 10_000}}, "ok"]}
    chars, media = payload_size(block)
    assert media == 1 and chars < 100  # the image's bytes are not counted as text


def test_a_dict_content_counts_its_text_or_its_payload() -> None:
    text_block = {"role": "user", "content": {"type": "text", "text": "x" * 400}}
    assert estimate_message_tokens(text_block) == estimate_message_tokens({"role": "user", "content": "x" * 400})
    other = {"role": "user", "content": {"type": "document", "text": 5, "title": "y" * 400}}
    assert estimate_message_tokens(other) > estimate_message_tokens({"role": "user", "content": ""}) + 90


def test_a_scalar_content_counts_as_its_text() -> None:
    assert estimate_message_tokens({"role": "user", "content": 1234567}) == estimate_message_tokens(
        {"role": "user", "content": "1234567"})


def test_tool_calls_in_a_tuple_and_non_string_keys_are_counted_or_skipped() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{" + "a" * 400 + "}"}}
    as_list = estimate_message_tokens({"role": "assistant", "content": None, "tool_calls": [call]})
    as_tuple = estimate_message_tokens({"role": "assistant", "content": None, "tool_calls": (call,)})
    assert as_tuple == as_list > 100
    odd = {"role": "user", "content": "hi", "name": "a", "extra": 1, 7: {"never": "sent" * 100}}
    assert estimate_message_tokens(odd) == estimate_message_tokens({k: v for k, v in odd.items() if k != 7})


class _PluginTokenizer:
    """A plugin tokenizer with ``count`` only (no ``count_many``): one token per word."""

    name = "words"

    def count(self, text: str) -> int:
        return len(text.split())


def test_a_plugin_tokenizer_without_count_many_counts_each_text() -> None:
    counter = RequestCounter("some-model", "", _PluginTokenizer())
    assert counter.method == "exact:words" and counter.margin == 0.0
    message = {"role": "user", "content": ["one two", {"type": "text", "text": "three"}, {"type": "image_url"}]}
    base = counter.message_tokens({"role": "user", "content": ""})
    assert counter.message_tokens(message) == base + 3 + IMAGE_TOKEN_ESTIMATE
    assert counter.message_tokens({"role": "user", "content": {"type": "text", "text": "four five"}}) == base + 2
    assert counter.message_tokens({"role": "user", "content": 12345}) == base + 1


def test_counting_method_names_an_unnamed_plugin_tokenizer() -> None:
    class Anonymous:
        def count(self, text: str) -> int:
            return 1

    assert counting_method("gpt-4o", "", Anonymous()) == ("exact:plugin", 0.0)


# --- model data -------------------------------------------------------------------------------


def test_lookup_edges() -> None:
    assert lookup("   ") is None
    assert lookup("openai/") is None
    dated = lookup("claude-sonnet-4-5")
    assert dated is not None
    assert lookup("claude-sonnet-4-5-latest") == dated


def test_cache_read_ratio_needs_both_prices() -> None:
    assert ModelInfo(provider="p", model="m", context_window=1, input_price=2.0, cache_read_price=0.5).cache_read_ratio == 0.25
    assert ModelInfo(provider="p", model="m", context_window=1, input_price=None, cache_read_price=0.5).cache_read_ratio is None
    assert ModelInfo(provider="p", model="m", context_window=1, input_price=0.0, cache_read_price=0.0).cache_read_ratio is None


# --- engine ----------------------------------------------------------------------------------


def test_coerce_usage_edges() -> None:
    empty = coerce_usage(None)
    assert (empty.prompt_tokens, empty.completion_tokens, empty.total_tokens) == (0, 0, 0)
    # a boolean is not a count: the next name is read instead
    usage = coerce_usage({"prompt_tokens": True, "input_tokens": 12, "completion_tokens": 3})
    assert usage.prompt_tokens == 12 and usage.completion_tokens == 3


def test_compression_report_fits_only_when_counted() -> None:
    assert CompressionReport().fits is None
    assert CompressionReport(tokens_after=10, threshold_tokens=10).fits is True
    assert CompressionReport(tokens_after=11, threshold_tokens=10).fits is False


class _Bare(ContextEngine):
    name = "bare"


def test_the_base_engine_defaults() -> None:
    engine = _Bare(config=Config())
    with pytest.raises(NotImplementedError, match="_Bare must implement compress"):
        engine.compress([{"role": "user", "content": "x"}])
    assert json.loads(engine.handle_tool_call("mystery", {})) == {"error": "Unknown context engine tool: mystery"}
    engine.update_model("gpt-4o", 128_000, max_tokens=4096)
    assert engine.max_tokens == 4096 and engine.context_length == 128_000


def test_manual_compression_feedback_text_joins_its_lines(tmp_path: Path) -> None:
    session = Session.open(cwd=tmp_path, home=tmp_path, env={}, persist=False, model="gpt-4o")
    try:
        result = session.compress([{"role": "user", "content": "hi"}])
    finally:
        session.close()
    feedback = result.feedback
    parts = [p for p in (feedback.headline, feedback.token_line, feedback.note) if p]
    assert parts and feedback.text == "\n".join(parts)


# --- logging ---------------------------------------------------------------------------------


@pytest.fixture
def plugin_log() -> Iterator[list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger(stdlib_name("acme_untested"))
    handler = Keep()
    logger.addHandler(handler)
    saved = logger.level
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved)


def test_disabled_levels_emit_nothing(plugin_log: list[logging.LogRecord]) -> None:
    logging.getLogger(stdlib_name("acme_untested")).setLevel(logging.CRITICAL + 10)
    log = get_logger("acme_untested")
    for method in (log.warning, log.error, log.exception, log.critical):
        assert method("nothing") is None
    assert plugin_log == []


def test_exception_and_critical_reach_the_handlers(plugin_log: list[logging.LogRecord]) -> None:
    logging.getLogger(stdlib_name("acme_untested")).setLevel(logging.DEBUG)
    log = get_logger("acme_untested")
    try:
        raise ValueError("boom")
    except ValueError:
        log.exception("it_failed", step="read")
    log.critical("it_is_bad")
    failed, bad = plugin_log
    assert failed.levelno == logging.ERROR and failed.exc_info is not None
    assert failed.hermes_event["step"] == "read"  # type: ignore[attr-defined]
    assert bad.levelno == logging.CRITICAL
    rendered = json.loads(EventFormatter("json", tracebacks=True).format(failed))
    assert "ValueError: boom" in rendered["exception"]
    assert "exception" not in json.loads(EventFormatter("json").format(failed))


def test_stdlib_name_of_no_name_is_the_root() -> None:
    assert stdlib_name(None) == stdlib_name("") == "hermes_core"
    assert stdlib_name("acme") == "hermes_core.plugins.acme"

"""Registration, the missing-extra error, and the pure helpers behind the LLM summarisers."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import PluginHost, load_config
from hermes_core.summarizer import (
    SummarizerError,
    SummarizerMissingDependencyError,
    SummaryRequest,
)
from hermes_plugins._common.reasoning import strip_reasoning
from hermes_plugins.summarizer_http import (
    AUTH_STATUSES,
    TIMEOUT_STATUSES,
    display_url,
    error_text,
    failure_kind,
)
from hermes_plugins.summarizers import (
    AnthropicSummarizer,
    OpenAISummarizer,
    max_tokens_for,
)

from hypothesis_budget import examples


def test_builtin_plugin_registers_both_providers(plugin_host: PluginHost) -> None:
    factories = plugin_host.summarizers()
    assert factories["openai"] is OpenAISummarizer
    assert factories["anthropic"] is AnthropicSummarizer


def test_factories_take_the_config_and_an_optional_model() -> None:
    config = load_config(data={"compression": {"summary": {"model": "cfg-model"}}}, env={})
    assert OpenAISummarizer(config).model == "cfg-model"
    assert AnthropicSummarizer(config, model="arg-model").model == "arg-model"


@pytest.mark.parametrize(
    ("factory", "module"), [(OpenAISummarizer, "openai"), (AnthropicSummarizer, "anthropic")]
)
def test_missing_sdk_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, factory: type, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` raise ImportError
    config = load_config(data={"compression": {"summary": {
        "provider": module, "model": "m", "base_url": "http://127.0.0.1:9/v1",
    }}}, env={})
    summarizer = factory(config)  # building it never needs the SDK: engines stay constructible
    with pytest.raises(SummarizerMissingDependencyError) as caught:
        summarizer.summarize(SummaryRequest(prompt="p"))
    assert f"pip install 'hermes-core[{module}]'" in str(caught.value)
    assert caught.value.kind == "missing_dependency"


# --- failure classes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (401, "", "auth"),
        (402, "", "auth"),
        (403, "", "auth"),
        (429, "insufficient_quota", "auth"),
        (429, "You exceeded your current quota", "auth"),
        (400, "Your credit balance is too low", "auth"),
        (429, "spend limit reached", "auth"),
        (429, "Rate limit reached for requests", "timeout"),
        (408, "", "timeout"),
        (502, "", "timeout"),
        (504, "", "timeout"),
        (404, "", "model_not_found"),
        (400, "model_not_found", "model_not_found"),
        (503, "No available channel for model x", "model_not_found"),
        (400, "The model `x` does not exist or you do not have access", "model_not_found"),
        (500, "upstream request timed out", "timeout"),
        (500, "internal error", "other"),
        (503, "service unavailable", "other"),
        (529, "Overloaded", "other"),
        (400, "invalid request", "other"),
        (None, "something odd", "other"),
    ],
)
def test_failure_kind_table(status: int | None, text: str, kind: str) -> None:
    assert failure_kind(status, text) == kind


@given(status=st.sampled_from(sorted(AUTH_STATUSES)), text=st.text(max_size=80))
@settings(max_examples=examples(60), deadline=None)
def test_access_statuses_always_abort(status: int, text: str) -> None:
    assert failure_kind(status, text) == "auth"


@given(status=st.sampled_from(sorted(TIMEOUT_STATUSES)),
       text=st.text(alphabet="abcdefghijklmnoprstuvwxyz ", max_size=40))
@settings(max_examples=examples(60), deadline=None)
def test_timeout_statuses_cool_down_unless_out_of_credit(status: int, text: str) -> None:
    assert failure_kind(status, text) in {"timeout", "auth"}
    assert failure_kind(status, "slow down") == "timeout"


def test_error_text_prefers_the_providers_message_and_is_bounded() -> None:
    class Fake(Exception):
        body = {"error": {"message": "bad key", "type": "authentication_error", "code": None}}

    assert error_text(Fake("Error code: 401 - {...}")) == "bad key | authentication_error"

    class Long(Exception):
        body = {"error": {"message": "x" * 5_000}}

    assert len(error_text(Long())) <= 300


def test_summarizer_errors_keep_their_status() -> None:
    assert SummarizerError("boom", status=500).status == 500


# --- output cleaning -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("<think>plan</think>\nSummary", "Summary"),
        ("<THINK>plan</THINK>Summary", "Summary"),
        ("<thinking>a\nb</thinking>\n\nSummary", "Summary"),
        ("Summary\n<reasoning>why</reasoning>", "Summary"),
        ("<reasoning_scratchpad>x</reasoning_scratchpad>Summary", "Summary"),
        ("<reflection>hm</reflection>Summary<thought>x</thought>", "Summary"),
        ('<think type="x">plan</think>Summary', "Summary"),
        # A server's reasoning parser ate the opening tag but left the closing one.
        ("the plan is...\n</think>\n\nSummary", "Summary"),
        # Cut off while still thinking: nothing of it is a summary.
        ("<think>still planning when the tokens ran out", ""),
        # A summary that merely mentions a tag keeps its text.
        ("Fixed the parser for <think> tags.", "Fixed the parser for <think> tags."),
        ("  plain summary  \n", "plain summary"),
    ],
)
def test_strip_reasoning(raw: str, clean: str) -> None:
    assert strip_reasoning(raw) == clean


@given(st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=200))
@settings(max_examples=examples(100), deadline=None)
def test_text_without_tags_is_only_trimmed(text: str) -> None:
    assert strip_reasoning(text) == text.strip()


# --- small pieces --------------------------------------------------------------------------------


@given(st.integers(min_value=0, max_value=200_000))
@settings(max_examples=examples(60), deadline=None)
def test_anthropic_max_tokens_leaves_headroom(budget: int) -> None:
    cap = max_tokens_for(SummaryRequest(prompt="p", budget_tokens=budget))
    assert cap >= 1_024
    assert cap >= 2 * budget


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:secret@host:8000/v1?api_key=abc", "http://host:8000/v1"),
        ("https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"),
        ("https://[::1]:8080/v1", "https://[::1]:8080/v1"),
        ("localhost:11434", "localhost:11434"),
    ],
)
def test_display_url_hides_credentials(url: str, shown: str) -> None:
    assert display_url(url) == shown

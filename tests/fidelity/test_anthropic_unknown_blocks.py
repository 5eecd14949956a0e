"""Beta and future Anthropic blocks (``mid_conv_system``, ``advisor_tool_result``, ``fallback``,
``tool_reference`` in a tool result, an invented type): back to Anthropic byte-identical where
they stood, a visible counted placeholder for OpenAI Chat and Responses, and counted in the
token estimates by their size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hermes_core.content_tokens import content_tokens
from hermes_core.conversion import openai_part
from hermes_core.tokens import estimate_message_tokens

from fidelity_fixtures import (
    ADVISOR_ERROR,
    ADVISOR_RESULT,
    FALLBACK,
    HOLO_BLOCK,
    MID_CONV_SYSTEM,
    THINK_1,
    TOOL_REFERENCE,
    beta_block_history,
    open_session,
)

BETA = (MID_CONV_SYSTEM, ADVISOR_RESULT, FALLBACK, TOOL_REFERENCE, HOLO_BLOCK)


def _bare(value: Any) -> Any:
    """``value`` without the cache layout's markers (the layout's own, tested elsewhere)."""
    if isinstance(value, list):
        return [_bare(v) for v in value]
    if isinstance(value, dict):
        return {k: _bare(v) for k, v in value.items() if k != "cache_control"}
    return value


def test_each_beta_block_and_a_future_type_goes_back_to_anthropic_as_it_came(tmp_path: Path) -> None:
    history = beta_block_history()
    session = open_session(tmp_path)
    request = session.request(history)
    sent = request["messages"]
    assert json.dumps(_bare(sent[0]["content"])) == json.dumps(history[0]["content"])
    # the signed turn with its fallback between two thinking runs: byte for byte, in order
    assert json.dumps(_bare(sent[1]["content"])) == json.dumps(history[1]["content"])
    assert sent[2]["content"][0]["content"] == [TOOL_REFERENCE]
    assert _bare(sent[3]["content"]) == history[3]["content"]
    report = session.last_request_report
    assert report is not None and report.lossless, report.describe()
    assert "omitted" not in json.dumps(sent)


def test_the_layout_marker_never_lands_on_a_fallback_block(tmp_path: Path) -> None:
    history = [{"role": "user", "content": "Go."},
               {"role": "assistant", "content": [THINK_1, {"type": "text", "text": "Done."}, FALLBACK]},
               {"role": "user", "content": "Thanks."}]
    request = open_session(tmp_path).request(history)
    reply = request["messages"][1]["content"]
    assert reply[2] == FALLBACK  # documents no cache_control: the marker goes to the text
    assert "cache_control" in reply[1] and "cache_control" not in reply[0]


def test_openai_chat_gets_a_counted_placeholder_for_each(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    request = session.request(beta_block_history())
    text = json.dumps(request["messages"])
    for shown in ("[mid_conv_system omitted: system text, 30 characters]",
                  "[advisor_tool_result omitted: advisor_result, 41 characters]",
                  "[fallback omitted: from claude-opus-4-8 to claude-sonnet-4-6]",
                  "[tool_reference omitted: tool get_weather]",
                  "[holo_block omitted]"):
        assert shown in text, shown
    report = session.last_request_report
    assert report is not None
    for kind in ("mid_conv_system", "advisor_tool_result", "fallback", "tool_reference", "holo_block"):
        assert report.placeholders.get(kind) == 1, report.describe()
    assert "answer in French" not in text and "Check the handler" not in text


def test_responses_gets_the_same_placeholders(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="openai")
    request = session.request(beta_block_history(), api="responses")
    text = json.dumps(request["input"])
    for kind in ("mid_conv_system", "advisor_tool_result", "fallback", "tool_reference", "holo_block"):
        assert f"[{kind} omitted" in text, kind
    assert "holo_01" not in text


def test_an_advisor_error_says_its_code() -> None:
    notes: dict[str, int] = {}
    part = openai_part(ADVISOR_ERROR, "assistant", notes)
    assert part == {"type": "text", "text": "[advisor_tool_result omitted: error unavailable]"}
    assert notes == {"placeholder:advisor_tool_result": 1}


def test_token_estimates_count_each_block_by_its_size() -> None:
    for block in BETA:
        size = len(json.dumps(block, separators=(",", ":")))
        assert size / 4 * 0.5 <= content_tokens([block]) <= size / 4 * 1.5 + 5, block["type"]
        bare = estimate_message_tokens({"role": "user", "content": []})
        with_block = estimate_message_tokens({"role": "user", "content": [block]})
        assert size / 4 * 0.5 <= with_block - bare <= size / 4 * 1.5 + 5, block["type"]

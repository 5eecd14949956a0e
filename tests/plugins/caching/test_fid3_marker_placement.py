"""Native Anthropic layout: the ``cache_control`` marker goes on the last content part that
takes one (the core's ``takes_marker``) - never on a ``fallback`` block, a thinking block or a
block of a type nobody documented (the API may refuse it), and never on a Chat part the wire
converts without carrying the marker (an ``image_url``: the breakpoint was silently lost)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.plugin import takes_marker
from hermes_plugins.caching import anthropic_layout, apply_cache_marker, can_carry_marker

from fidelity_fixtures import open_session
from hypothesis_budget import examples

MARKER = {"type": "ephemeral"}
TEXT = {"type": "text", "text": "the handler in b.py"}
FALLBACK = {"type": "fallback", "from": {"model": "claude-a"}, "to": {"model": "claude-b"}}
UNKNOWN = {"type": "future_beta_block", "payload": 1}
THINKING = {"type": "thinking", "thinking": "t", "signature": "c2ln"}
IMAGE_URL = {"type": "image_url", "image_url": {"url": "https://example.test/a.png"}}
DOCUMENT = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "doc"}}
TOOL_REF = {"type": "tool_reference", "tool_name": "grep"}
PARTS = [TEXT, FALLBACK, UNKNOWN, THINKING, IMAGE_URL, DOCUMENT, TOOL_REF]


def _marked_at(message: dict[str, Any]) -> list[int]:
    return [i for i, p in enumerate(message["content"]) if isinstance(p, dict) and "cache_control" in p]


def test_the_marker_skips_a_trailing_fallback_block() -> None:
    out = apply_cache_marker({"role": "user", "content": [TEXT, FALLBACK]}, MARKER, native=True)
    assert _marked_at(out) == [0]


def test_the_marker_skips_a_trailing_unknown_block() -> None:
    out = apply_cache_marker({"role": "user", "content": [TEXT, DOCUMENT, UNKNOWN]}, MARKER, native=True)
    assert _marked_at(out) == [1]


def test_a_message_with_no_part_that_takes_one_is_not_a_carrier() -> None:
    message = {"role": "user", "content": [UNKNOWN, FALLBACK]}
    assert not can_carry_marker(message, native=True)
    laid = anthropic_layout({"system": "s", "messages": [{"role": "user", "content": "q"}, message]})
    assert _marked_at(laid["messages"][1]) == []  # the breakpoint went to the message before
    assert laid["messages"][0]["content"][0]["cache_control"] == MARKER


def test_the_envelope_form_is_unchanged() -> None:
    out = apply_cache_marker({"role": "user", "content": [TEXT, IMAGE_URL]}, MARKER, native=False)
    assert _marked_at(out) == [1]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(PARTS).map(dict), min_size=1, max_size=6))
def test_the_marker_lands_on_the_last_part_that_takes_one(parts: list[dict[str, Any]]) -> None:
    message = {"role": "user", "content": parts}
    takers = [i for i, p in enumerate(parts) if takes_marker(p)]
    assert can_carry_marker(message, native=True) == bool(takers)
    out = apply_cache_marker(message, MARKER, native=True)
    assert _marked_at(out) == takers[-1:]
    assert all("cache_control" not in p for p in parts)  # the input is never mutated


def test_through_a_session_the_request_never_marks_a_fallback_or_unknown_block(tmp_path: Path) -> None:
    session = open_session(tmp_path, provider="anthropic")
    try:
        for last in (FALLBACK, UNKNOWN, IMAGE_URL):
            request = session.request([{"role": "user", "content": [TEXT, last]}])
            [message] = request["messages"]
            assert "cache_control" not in message["content"][-1]
            assert message["content"][0]["cache_control"] == MARKER  # not lost either
    finally:
        session.close()

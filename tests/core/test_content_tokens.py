"""``content_tokens``: one rough estimate for every content shape (issue 28), priced per part
kind - a base64 image costs what a provider charges for an image, not its JSON length."""

from __future__ import annotations

import base64
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.content_tokens import (
    IMAGE_TOKENS,
    PART_OVERHEAD_TOKENS,
    content_tokens,
    message_content_tokens,
    part_tokens,
)

from hypothesis_budget import examples

BIG_PNG = base64.b64encode(bytes(200_000)).decode()


def test_images_cost_a_fixed_amount_in_every_shape() -> None:
    shapes = [
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{BIG_PNG}"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": BIG_PNG}},
        {"type": "input_image", "image_url": f"data:image/png;base64,{BIG_PNG}"},
    ]
    assert [content_tokens([s]) for s in shapes] == [IMAGE_TOKENS] * 4
    assert len(BIG_PNG) // 4 > 40 * IMAGE_TOKENS  # what a JSON-length estimate would have said


def test_text_parts_count_their_text() -> None:
    parts = [{"type": "text", "text": "a" * 400}, {"type": "output_text", "text": "b" * 40}, "c" * 8]
    assert content_tokens(parts) == 100 + 10 + 2 + 2 * PART_OVERHEAD_TOKENS
    assert content_tokens("x" * 401) == 101 and content_tokens(None) == 0


def test_tool_results_search_results_and_documents_count_what_they_hold() -> None:
    nested = {"type": "tool_result", "tool_use_id": "t", "content": [
        {"type": "text", "text": "x" * 400},
        {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}
    assert content_tokens([nested]) >= 100 + IMAGE_TOKENS
    search = {"type": "search_result", "source": "s", "title": "t", "content": [{"type": "text", "text": "y" * 800}]}
    assert part_tokens(search) >= 200
    doc = {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "z" * 4000}}
    assert 1000 <= part_tokens(doc) < 1100


def test_audio_is_priced_by_its_length_not_its_base64() -> None:
    minute_of_wav = base64.b64encode(bytes(48_000 * 60)).decode()
    part = {"type": "input_audio", "input_audio": {"data": minute_of_wav, "format": "wav"}}
    assert 1_000 <= content_tokens([part]) <= 2_000


def test_a_deep_unknown_part_is_walked_without_recursion() -> None:
    deep: Any = "leaf"
    for _ in range(20_000):
        deep = {"k": [deep]}
    assert content_tokens([{"type": "mystery", "payload": deep}]) > 0


def test_a_kept_anthropic_reply_counts_its_thinking() -> None:
    message = {"role": "assistant", "content": "ok", "_anthropic_content": [
        {"type": "thinking", "thinking": "t" * 4000, "signature": "s"}, {"type": "text", "text": "ok"}]}
    assert message_content_tokens(message) >= 1000
    assert message_content_tokens({"role": "assistant", "content": "ok"}) == 1


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.text(max_size=50), max_size=8))
def test_a_list_of_text_parts_never_costs_less_than_its_text(texts: list[str]) -> None:
    parts = [{"type": "text", "text": t} for t in texts]
    assert content_tokens(parts) >= (sum(len(t) for t in texts) + 3) // 4

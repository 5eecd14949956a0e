"""A kept Anthropic reply (its text in ``content``, its blocks under ``_anthropic_content``) is
counted once: the rough estimate and the exact counter price it like the same blocks read as
plain content, not its text twice (which made compaction start early on Anthropic sessions
with thinking)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.content_tokens import content_tokens, message_content_tokens
from hermes_core.conversion import ANTHROPIC_CONTENT
from hermes_core.sdk import as_message
from hermes_core.tokens import RequestCounter, estimate_message_tokens

from fidelity_fixtures import CITED_SPANS, THINK_1, WEB_SEARCH_RESULT, WEB_SEARCH_USE
from hypothesis_budget import examples

PARAGRAPH = ("The handler in b.py reads the request, checks the session token and hands the body "
             "to the router; the crash comes from the router's empty-path branch. ")


def _reply(blocks: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(kept reply, the same blocks as plain content)``."""
    kept = as_message({"type": "message", "role": "assistant", "content": blocks})
    assert ANTHROPIC_CONTENT in kept and kept["content"]
    return kept, {"role": "assistant", "content": blocks}


def _text_heavy() -> list[dict[str, Any]]:
    return [THINK_1, {"type": "text", "text": PARAGRAPH * 30},
            {"type": "tool_use", "id": "toolu_31", "name": "read_file", "input": {"path": "b.py"}}]


def test_a_text_heavy_reply_with_thinking_is_estimated_once() -> None:
    kept, alone = _reply(_text_heavy())
    ratio = estimate_message_tokens(kept) / estimate_message_tokens(alone)
    assert 0.9 <= ratio <= 1.1, ratio  # counted twice, it was ~1.9


def test_the_exact_counter_counts_it_once() -> None:
    kept, alone = _reply(_text_heavy())
    counter = RequestCounter("claude-sonnet-4-5", "anthropic")
    ratio = counter.message_tokens(kept) / counter.message_tokens(alone)
    assert 0.9 <= ratio <= 1.1, ratio


def test_server_blocks_and_citations_still_count() -> None:
    """Only the text and the calls are said twice: search pages, citations and thinking are in
    the blocks alone and must still count."""
    kept, alone = _reply([THINK_1, WEB_SEARCH_USE, WEB_SEARCH_RESULT, *CITED_SPANS])
    bare = estimate_message_tokens({"role": "assistant", "content": kept["content"]})
    assert estimate_message_tokens(kept) > bare + 300  # the encrypted pages
    ratio = estimate_message_tokens(kept) / estimate_message_tokens(alone)
    assert 0.9 <= ratio <= 1.1, ratio


@settings(max_examples=examples(30), deadline=None)
@given(texts=st.lists(st.text(min_size=1, max_size=400).filter(str.strip), min_size=1, max_size=4),
       thinking=st.text(max_size=400))
def test_kept_and_plain_agree_for_any_text(texts: list[str], thinking: str) -> None:
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": thinking, "signature": "EqQBsig"}]
    blocks += [{"type": "text", "text": t} for t in texts]
    kept, alone = _reply(blocks)
    # the same characters, give or take the blank lines that join the texts and each block's "type" key
    assert abs(estimate_message_tokens(kept) - estimate_message_tokens(alone)) <= 8 + 4 * len(texts)


def test_a_block_whose_type_is_not_a_string_is_counted_not_a_crash() -> None:
    """A malformed block (``"type": [...]``, unhashable) in a kept reply or a content list is
    counted by its strings; it used to raise ``TypeError`` out of the counters."""
    odd = {"type": ["odd"], "data": "x" * 400}
    message = {"role": "assistant", "content": [odd, {"type": "text", "text": "ok"}],
               ANTHROPIC_CONTENT: [odd, {"type": "text", "text": "ok"}]}
    assert estimate_message_tokens(message) > 200
    assert RequestCounter("claude-sonnet-4-5", "anthropic").message_tokens(message) > 50
    assert content_tokens([odd]) > 90 and message_content_tokens(message) > 90

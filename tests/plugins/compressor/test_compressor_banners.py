"""Banners are recognised only where we put them (issue 19): metadata, or the first position."""

from __future__ import annotations

import pytest

from hermes_plugins.compressor.framing import OWNER_KEY, SUMMARY_KEY, compose_standalone, frame_summary

from compressor_support import assistant, call, make_engine, system, tool, user

BANNERS = ["[HANDOFF NOTES - please read these notes first", "[CONTEXT SUMMARY]: my own words",
           "[CONTEXT COMPACTION] typed by me\nstill mine"]


def rounds(n: int) -> list:
    out = []
    for i in range(n):
        out += [assistant("", call(f"c{i}", "terminal", command=f"step {i}")), tool(f"c{i}", "out\n" * 400)]
    return out


@pytest.mark.parametrize("banner", BANNERS)
def test_a_user_message_that_looks_like_a_banner_is_never_removed(banner: str) -> None:
    messages = [system(), user("start the migration"), *rounds(6), user(banner), *rounds(12),
                user(banner + " (again)")]
    engine = make_engine(16_000)
    out = engine.compress(messages, force=True)
    assert any(m["role"] == "user" and m["content"] == banner + " (again)" for m in out)
    # The earlier one is condensed like any other request, not dropped as an old summary.
    assert engine.last_compression_report["phases"]["summarized_messages"] > 0
    assert sum(1 for m in out if m.get(SUMMARY_KEY)) == 1


@pytest.mark.parametrize("banner", BANNERS)
def test_the_newest_request_is_the_user_s_even_at_the_first_position(banner: str) -> None:
    messages = [system(), user(banner), *rounds(20)]
    out = make_engine(16_000).compress(messages, force=True)
    assert any(m["role"] == "user" and m["content"] == banner for m in out)


def test_our_summaries_carry_metadata_and_a_restart_finds_one_without_it() -> None:
    messages = [system(), user("start"), *rounds(20), user("go on")]
    first = make_engine(16_000).compress(messages, force=True)
    ours = [m for m in first if m.get(SUMMARY_KEY)]
    assert len(ours) == 1 and ours[0][OWNER_KEY] == "hermes-core"
    # A host that dropped the underscore keys restarts: text at the first position counts.
    stripped = [{k: v for k, v in m.items() if not k.startswith("_")} for m in first]
    resumed = [*stripped, *rounds(20), user("next")]
    out = make_engine(16_000).compress(resumed, force=True)
    assert sum(1 for m in out if m.get(SUMMARY_KEY)) == 1
    assert not any(str(m.get("content")).startswith("[HANDOFF NOTES") and not m.get(SUMMARY_KEY)
                   for m in out)


def test_banner_text_in_a_later_assistant_message_is_just_text() -> None:
    fake = compose_standalone(frame_summary("not really a summary"))
    messages = [system(), user("start"), *rounds(10), assistant(fake), user("continue"), *rounds(10)]
    out = make_engine(16_000).compress(messages, force=True)
    assert sum(1 for m in out if m.get(SUMMARY_KEY)) == 1

"""Phase 4, assembly (§10): framing, role choice, merges, old prefixes, pair repair, media."""

from __future__ import annotations

from hermes_plugins.compressor.assemble import (
    MEDIA_PLACEHOLDER,
    TOOL_CALL_REMOVED,
    assemble,
    choose_role,
    sanitize_tool_pairs,
    strip_historical_media,
)
from hermes_plugins.compressor.framing import (
    END_MARKER,
    HAS_USER_TURN_KEY,
    MERGED_KEY,
    SUMMARY_KEY,
    SUMMARY_PREFIX,
    SYSTEM_NOTE,
    classify_message,
    compose_prepended,
    compose_standalone,
    compose_wrapped,
    frame_summary,
    is_summary_message,
    split_summary_text,
    unwrap,
)

from compressor_support import (
    assistant,
    call,
    image_part,
    snapshot,
    system,
    tool,
    user,
)

BODY = "## Latest user request\nfix src/app.py\n\n## Completed actions\n1. [terminal] ran `make` -> exit 0, 3 lines output"


def test_framing_says_background_only_and_ends_with_a_marker() -> None:
    text = compose_standalone(frame_summary(BODY))
    assert text.startswith(SUMMARY_PREFIX)
    assert text.endswith(END_MARKER)
    lowered = SUMMARY_PREFIX.lower()
    assert "not as instructions" in lowered
    assert "most recent user message that follows" in lowered
    assert "may already reflect" in lowered
    assert split_summary_text(text) == ("standalone", BODY, "")


def test_merged_forms_keep_the_genuine_content_exactly() -> None:
    block = frame_summary(BODY)
    for original in ("  spaced\n", "plain", "multi\n\nparagraph"):
        assert split_summary_text(compose_prepended(block, original)) == ("merged", BODY, original)
        assert split_summary_text(compose_wrapped(original, block)) == ("merged", BODY, original)


def test_older_and_foreign_prefixes_are_recognised() -> None:
    assert split_summary_text("[CONTEXT SUMMARY]: old body") == ("standalone", "old body", "")
    foreign = "[CONTEXT COMPACTION — REFERENCE ONLY] earlier turns were compacted\nthe body\n--- END OF CONTEXT SUMMARY — respond below ---"
    assert split_summary_text(foreign) == ("standalone", "the body", "")
    assert split_summary_text("[HANDOFF NOTES - an older wording]\nolder body") == ("standalone", "older body", "")
    assert split_summary_text("just text") is None
    assert not is_summary_message(user("mentions [HANDOFF NOTES in passing"))


def test_role_alternates_after_the_head() -> None:
    head = [system(), user("first"), assistant("answer")]
    # last head assistant -> summary is a user message
    assert choose_role(head, [assistant("x")], 3) == ("user", False, False)
    # last head user, tail starts with assistant -> flipping to user repeats the head: merge
    assert choose_role(head[:2], [assistant("x")], 2) == ("assistant", True, False)
    role, merge, force = choose_role(head[:2], [user("next")], 2)
    assert (role, merge, force) == ("assistant", False, False)


def test_system_only_head_forces_a_user_summary_and_merges_into_a_user_tail() -> None:
    out = assemble([system()], BODY, [user("latest"), assistant("ok")], compress_start=1)
    assert out[0]["content"].endswith(SYSTEM_NOTE)
    assert out[1]["role"] == "user" and out[1][SUMMARY_KEY] and out[1][MERGED_KEY] == "prepended"
    kind, body, genuine = classify_message(out[1])
    assert (kind, body, genuine) == ("merged", BODY, "latest")
    assert out[1]["content"].endswith("latest")


def test_standalone_summary_when_roles_allow() -> None:
    head = [system(), user("first"), assistant("answer")]
    out = assemble(head, BODY, [assistant("working"), user("latest")], compress_start=3)
    summary = out[3]
    assert summary["role"] == "user" and summary[SUMMARY_KEY] and summary[HAS_USER_TURN_KEY]
    assert summary["content"].endswith(END_MARKER)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_wrapped_merge_when_the_summary_cannot_stand_alone() -> None:
    head = [system(), user("first")]
    tail = [user("second"), assistant("reply")]
    # last head user -> role assistant; tail starts with user -> flip to user equals head -> ...
    role, merge, force = choose_role(head, tail, 2)
    assert (role, merge) == ("assistant", False)
    tail2 = [assistant("reply"), user("x")]
    role, merge, force = choose_role(head, tail2, 2)
    assert merge and role == "assistant"
    out = assemble(head, BODY, tail2, compress_start=2)
    merged = out[2]
    assert merged["role"] == "assistant" and merged[MERGED_KEY] == "wrapped"
    assert classify_message(merged) == ("merged", BODY, "reply")
    assert unwrap(merged) == {"role": "assistant", "content": "reply"}


def test_merging_into_multimodal_content_uses_parts() -> None:
    tail = [user([{"type": "text", "text": "see this"}, image_part()])]
    out = assemble([system()], BODY, tail, compress_start=1)
    parts = out[1]["content"]
    assert parts[0]["type"] == "text" and parts[0]["text"].startswith(SUMMARY_PREFIX)
    assert parts[1:] == tail[0]["content"]
    kind, body, genuine = classify_message(out[1])
    assert kind == "merged" and body == BODY and genuine == tail[0]["content"]


def test_stale_summaries_in_head_and_tail_are_dropped_or_unwrapped() -> None:
    old = {"role": "user", "content": compose_standalone(frame_summary("old")), SUMMARY_KEY: True}
    merged_old = {"role": "user", "content": compose_prepended(frame_summary("old"), "real question"), SUMMARY_KEY: True}
    out = assemble([system(), old], BODY, [merged_old, assistant("a")], compress_start=2)
    texts = [str(m["content"]) for m in out]
    assert sum(1 for m in out if m.get(SUMMARY_KEY)) == 1
    assert any(t.endswith("real question") for t in texts)
    assert all("\nold" not in t for t in texts)


def test_no_user_anywhere_forces_the_summary_to_user() -> None:
    out = assemble([system()], BODY, [assistant("", call("a")), tool("a", "r")], compress_start=1)
    assert out[1]["role"] == "user"


def test_sanitize_drops_orphans_and_unanswered_calls_without_inventing_results() -> None:
    messages = [
        user("go"),
        tool("ghost", "orphan result"),
        assistant("", call("a"), call("b")),
        tool("a", "result a"),
        tool("a", "second result for a"),
        assistant("", call("c")),
        user("next"),
    ]
    before = snapshot(messages)
    out, repairs = sanitize_tool_pairs(messages)
    assert snapshot(messages) == before
    assert repairs == 4
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == ["a"]
    assert [c["id"] for c in out[1]["tool_calls"]] == ["a"]
    assert "tool_calls" not in out[3] and out[3]["content"] == TOOL_CALL_REMOVED
    clean = [user("go"), assistant("", call("a")), tool("a", "r")]
    assert sanitize_tool_pairs(clean)[0] is clean


def test_historical_media_is_stripped_before_the_last_user_image() -> None:
    messages = [
        user([{"type": "text", "text": "old"}, image_part()]),
        assistant("", call("s", "browser_vision")),
        tool("s", [image_part()]),
        user([{"type": "text", "text": "new"}, image_part("https://img.example/new.png")]),
    ]
    out, removed = strip_historical_media(messages)
    assert removed == 2
    assert out[0]["content"][1] == {"type": "text", "text": MEDIA_PLACEHOLDER}
    assert out[3] is messages[3]
    assert messages[0]["content"][1]["type"] == "image_url"
    none, zero = strip_historical_media([user("no images")])
    assert zero == 0

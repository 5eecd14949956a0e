"""What a forced ``Session.compress`` does around the engine, counted rather than timed.

The manual ``/compress`` estimates the request before and after. The list it is given is about
to be replaced, so a session whose message cache does not already hold it estimates it in one
plain pass instead of building every message's wire form (``ProcessedHistory``) only to throw
it away; a session that synced the list on its last request reuses the cache. Either way the
figure is the same rough estimate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.tokens import estimate_request_tokens

from hypothesis_budget import examples


def history(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start the refactor"}]
    for i in range(turns):
        call_id = f"call_{i}"
        messages += [
            {"role": "assistant", "content": "", "tool_calls": [{"id": call_id, "type": "function", "function": {
                "name": "read_file", "arguments": json.dumps({"path": f"src/mod_{i}.py"})}}]},
            {"role": "tool", "tool_call_id": call_id, "content": f"# module {i}\n" + "value = compute(x)\n" * 300},
        ]
    messages.append({"role": "user", "content": "keep going"})
    return messages


def open_session(tmp_path: Path) -> Session:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    return Session.open(cwd=tmp_path, home=home, model="test-model", provider="openai",
                        context_length=200_000, persist=False, env={})


def test_a_fresh_session_does_not_process_the_list_it_compresses(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = history(60)
    expected = estimate_request_tokens(messages, system_prompt=session.system_prompt)
    result = session.compress(messages, force=True)
    assert len(result.messages) < len(messages)
    assert result.feedback.before_tokens == expected
    # Only the compressed list went through the cache (for the next request), not the input.
    assert session.message_cache.computed <= len(result.messages)


def test_a_synced_session_reuses_its_cache_for_the_same_figure(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    # (50 turns: 60 count over the threshold with the margin of an unknown model, issue 29)
    messages = history(50)
    session.before_request(messages)
    processed = session.message_cache.computed
    assert processed == len(messages)
    expected = estimate_request_tokens(messages, system_prompt=session.system_prompt)
    result = session.compress(messages, force=True)
    assert result.feedback.before_tokens == expected
    # Nothing of the input was processed again; only the summary (and what the cut rewrote).
    assert session.message_cache.computed - processed < len(result.messages)


def test_nothing_to_compress_reports_one_figure(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    result = session.compress(messages, force=True)
    assert result.messages is messages
    assert result.feedback.before_tokens == result.feedback.after_tokens == estimate_request_tokens(
        messages, system_prompt=session.system_prompt)
    assert session.message_cache.computed == 0


def test_an_estimate_is_a_pure_function_of_its_list(monkeypatch: Any) -> None:
    from hermes_core import tokens

    calls: list[int] = []
    real = tokens.estimate_message_tokens
    monkeypatch.setattr(tokens, "estimate_message_tokens", lambda m: calls.append(1) or real(m))
    messages = history(5)
    first = tokens.estimate_messages_tokens(messages)
    assert tokens.estimate_messages_tokens(messages) == first
    assert len(calls) == 2 * len(messages)  # nothing remembered between calls


def test_a_manual_compress_estimates_its_input_once(tmp_path: Path, monkeypatch: Any) -> None:
    from hermes_core import compaction, tokens
    from hermes_core.engine import KnownInput

    real = tokens.estimate_message_tokens

    def count(known: bool) -> int:
        calls: list[int] = []
        monkeypatch.setattr(tokens, "estimate_message_tokens", lambda m: calls.append(1) or real(m))
        if not known:  # the engine is told nothing of its input
            monkeypatch.setattr(compaction, "KnownInput", lambda **kw: KnownInput(
                messages=kw["messages"], length=kw["length"]))
        session = open_session(tmp_path / ("known" if known else "unknown"))
        session.compress(history(60), force=True)
        monkeypatch.undo()
        return len(calls)

    # The session's figure and the engine's report read one pass over the 122 messages.
    assert count(known=False) - count(known=True) >= len(history(60))


def test_a_manual_compress_reads_its_input_once_to_normalise_and_estimate(tmp_path: Path, monkeypatch: Any) -> None:
    # Normalising and estimating are one pass (``intake.read_history``): the input's plain
    # messages are summed inline there and never estimated one by one again, however the
    # engine then cuts the list; the figures are those of ``estimate_request_tokens``.
    from hermes_core import sdk, tokens

    def refuse(_messages: Any) -> Any:
        raise AssertionError("Session.compress normalised in a pass of its own")

    seen: list[int] = []
    real = tokens.estimate_message_tokens
    monkeypatch.setattr(tokens, "estimate_message_tokens", lambda m: seen.append(id(m)) or real(m))
    monkeypatch.setattr(sdk, "normalize_messages", refuse)
    session = open_session(tmp_path)
    messages = [{"role": "system", "content": "Answer tersely."}, *history(60)]
    before = estimate_request_tokens(messages, system_prompt=session.system_prompt)
    seen.clear()
    result = session.compress(messages, force=True)
    assert id(messages[0]) not in seen  # the protected head: read once, inline
    assert result.feedback.before_tokens == before
    report = session.engine.last_compression_report
    assert report["before"]["tokens"] == tokens.estimate_messages_tokens(messages)


@given(st.lists(st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant", "system", "tool"]),
                           "content": st.one_of(st.text(max_size=30), st.none())}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.one_of(st.just(""), st.none()),
                           "tool_calls": st.lists(st.fixed_dictionaries({"id": st.just("c1"), "function": st.fixed_dictionaries(
                               {"name": st.just("bash"), "arguments": st.text(max_size=20)})}), max_size=2)}),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(st.one_of(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}),
        st.fixed_dictionaries({"type": st.just("tool_result"), "tool_use_id": st.just("c1"),
                               "content": st.text(max_size=20)}),
    ), max_size=3)}),
), max_size=12))
@settings(max_examples=examples(150), deadline=None)
def test_normalize_estimating_is_normalize_then_estimate(messages: list[dict[str, Any]]) -> None:
    # ``read_history`` normalises and estimates in one pass: the same as the two passes.
    from hermes_core.intake import read_history
    from hermes_core.sdk import normalize_messages
    from hermes_core.tokens import estimate_messages_tokens

    normalized = normalize_messages(messages)
    found = read_history(messages)
    out, total = found.messages, found.estimate
    assert out == normalized and (out is messages) == (normalized is messages)
    assert total == estimate_messages_tokens(normalized)

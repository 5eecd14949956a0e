"""The pairing rule: matching by nearest unanswered call, and the provider validity check."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from hermes_core.pairing import is_valid_pairing, match_results, pairing_problems, pending_calls


def call(ident: str, name: str = "bash") -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": "{}"}}


def asst(*ids: str) -> dict[str, Any]:
    return {"role": "assistant", "content": "", "tool_calls": [call(i) for i in ids]}


def result(ident: str, text: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": ident, "content": text}


USER = {"role": "user", "content": "go"}


def test_a_reused_id_pairs_with_the_nearest_unanswered_call() -> None:
    messages = [USER, asst("c1"), result("c1", "first"), asst("c1"), result("c1", "second")]
    answers, unanswered = match_results(messages)
    assert answers == {2: (1, 0), 4: (3, 0)}
    assert unanswered == []
    assert is_valid_pairing(messages)


def test_parallel_calls_with_one_id_are_answered_in_order() -> None:
    messages = [USER, asst("x", "x", "y"), result("y"), result("x"), result("x")]
    answers, _ = match_results(messages)
    assert answers == {2: (1, 2), 3: (1, 0), 4: (1, 1)}
    assert is_valid_pairing(messages)


def test_a_result_after_the_next_message_is_invalid_but_still_matched() -> None:
    messages = [USER, asst("a"), {"role": "assistant", "content": "hm"}, result("a")]
    answers, _ = match_results(messages)
    assert answers == {3: (1, 0)}
    problems = pairing_problems(messages)
    assert any("message 1" in p for p in problems) and any("message 3" in p for p in problems)


def test_pending_calls_at_the_end_are_legal_unless_disallowed() -> None:
    messages = [USER, asst("a", "b"), result("a")]
    assert is_valid_pairing(messages)
    assert pending_calls(messages) == [(1, 1)]
    assert not is_valid_pairing(messages, allow_pending=False)
    assert pending_calls([*messages, result("b")]) == []


def test_orphans_and_duplicate_answers_are_reported() -> None:
    assert pairing_problems([USER, result("z")])
    assert pairing_problems([USER, asst("a"), result("a"), result("a")])


# --- property: a generated valid history is valid, and every result is matched to its call ---


@st.composite
def histories(draw: Any) -> tuple[list[dict[str, Any]], dict[int, tuple[int, int]]]:
    ids = draw(st.lists(st.sampled_from(["c1", "c2", "call_0", "toolu_9"]), min_size=1, max_size=4))
    messages: list[dict[str, Any]] = [USER]
    expected: dict[int, tuple[int, int]] = {}
    for _ in range(draw(st.integers(1, 6))):
        group = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3))
        a = len(messages)
        messages.append(asst(*group))
        order = draw(st.permutations(range(len(group))))
        # Equal ids in one message are answered first-come: relabel the expectation so.
        seen: dict[str, list[int]] = {}
        for p in range(len(group)):
            seen.setdefault(group[p], []).append(p)
        for p in order:
            ident = group[p]
            messages.append(result(ident))
            expected[len(messages) - 1] = (a, seen[ident].pop(0))
        if draw(st.booleans()):
            messages.append({"role": "user", "content": "next"})
    return messages, expected


@given(histories())
def test_generated_valid_histories_are_valid_and_matched(case: Any) -> None:
    messages, expected = case
    assert pairing_problems(messages) == []
    answers, unanswered = match_results(messages)
    assert answers == expected
    assert unanswered == []

"""The pairing rule: matching by nearest unanswered call, and the provider validity check."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermes_core.pairing import (
    TOOL_CALL_REMOVED,
    answered_in_order,
    is_valid_pairing,
    match_results,
    pairing_problems,
    pending_calls,
    repair_pairing,
)

from hypothesis_budget import examples


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


@settings(max_examples=examples(100))
@given(histories())
def test_generated_valid_histories_are_valid_and_matched(case: Any) -> None:
    messages, expected = case
    assert pairing_problems(messages) == []
    answers, unanswered = match_results(messages)
    assert answers == expected
    assert unanswered == []


# --- repair ------------------------------------------------------------------------------------


def test_a_valid_list_is_returned_as_the_same_object() -> None:
    messages = [USER, asst("c1"), result("c1"), asst("c1"), result("c1")]
    out, report = repair_pairing(messages)
    assert out is messages and report.changed == 0


def test_a_separated_result_moves_back_after_its_call() -> None:
    messages = [USER, asst("a"), {"role": "user", "content": "wait"}, result("a", "late")]
    out, report = repair_pairing(messages)
    assert report.moved == 1 and report.dropped_results == 0 and report.dropped_calls == 0
    assert [m["role"] for m in out] == ["user", "assistant", "tool", "user"]
    assert out[2]["content"] == "late"
    assert is_valid_pairing(out)


def test_an_ambiguous_separated_result_is_dropped_with_a_counted_note() -> None:
    # Two open calls carry "x" when the late result comes: which one it answers is a guess.
    messages = [USER, asst("x"), {"role": "user", "content": "and"}, asst("x"),
                {"role": "user", "content": "then"}, result("x")]
    before = [dict(m) for m in messages]
    out, report = repair_pairing(messages)
    assert messages == before  # never mutated
    assert report.dropped_results == 1 and report.moved == 0 and report.dropped_calls == 2
    assert is_valid_pairing(out)
    notes = " ".join(str(m.get("content")) for m in out if m["role"] == "assistant")
    assert "1 tool result removed" in notes and TOOL_CALL_REMOVED in notes


def test_orphans_duplicates_and_unanswered_calls_are_dropped_with_notes() -> None:
    messages = [USER, result("ghost"), asst("a", "b"), result("a"), result("a"),
                {"role": "assistant", "content": "thinking", "tool_calls": [call("c")]}, USER]
    out, report = repair_pairing(messages)
    assert (report.dropped_results, report.dropped_calls) == (2, 2)
    assert is_valid_pairing(out, allow_pending=False)
    assert [c["id"] for c in out[1]["tool_calls"]] == ["a"]
    assert "2 tool results removed" in out[1]["content"] and "1 tool call removed" in out[1]["content"]
    assert out[3]["content"].startswith("thinking\n(1 tool call removed")
    assert "tool_calls" not in out[3]


def test_pending_calls_of_the_newest_assistant_survive_repair() -> None:
    reply = asst("p1", "p2")
    messages = [USER, result("ghost"), USER, reply]
    out, _ = repair_pairing(messages)
    assert out[-1]["tool_calls"] == reply["tool_calls"]
    strict, report = repair_pairing(messages, allow_pending=False)
    assert report.dropped_calls == 2 and "tool_calls" not in strict[-1]


ROLES = st.sampled_from(["user", "assistant", "assistant_calls", "tool", "tool"])


@st.composite
def garbage(draw: Any) -> list[dict[str, Any]]:
    ids = ["a", "b", "c", ""]
    messages: list[dict[str, Any]] = []
    for kind in draw(st.lists(ROLES, max_size=14)):
        if kind == "user":
            messages.append({"role": "user", "content": draw(st.sampled_from(["u", ""]))})
        elif kind == "assistant":
            messages.append({"role": "assistant", "content": "text"})
        elif kind == "assistant_calls":
            group = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=3))
            messages.append({"role": "assistant", "content": draw(st.sampled_from(["", None, "t"])),
                             "tool_calls": [call(i) for i in group]})
        else:
            messages.append(result(draw(st.sampled_from(ids))))
    return messages


@settings(max_examples=examples(100))
@given(garbage(), st.booleans())
def test_repair_always_yields_a_valid_list_and_keeps_every_user_message(messages: Any, pending: bool) -> None:
    out, report = repair_pairing(messages, allow_pending=pending)
    assert pairing_problems(out, allow_pending=pending) == []
    assert [m for m in out if m["role"] == "user"] == [m for m in messages if m["role"] == "user"]
    tools_in = sum(m["role"] == "tool" for m in messages)
    tools_out = sum(m["role"] == "tool" for m in out)
    assert tools_in - tools_out == report.dropped_results
    if report.changed == 0:
        assert out is messages
    assert repair_pairing(out, allow_pending=pending)[0] is out


def _rule(messages: list[dict[str, Any]]) -> tuple[dict[int, tuple[int, int]], list[tuple[int, int]]]:
    """The matching rule read literally: scan back for the nearest assistant message with an
    unanswered call of the result's id, and take its first such call."""
    answered: set[tuple[int, int]] = set()
    answers: dict[int, tuple[int, int]] = {}
    for i, message in enumerate(messages):
        if message["role"] != "tool":
            continue
        ident = str(message.get("tool_call_id") or "")
        for j in range(i - 1, -1, -1):
            calls = messages[j].get("tool_calls") if messages[j]["role"] == "assistant" else None
            free = [p for p, c in enumerate(calls or ())
                    if str((c.get("id") or c.get("call_id") or "") if isinstance(c, dict) else "") == ident
                    and (j, p) not in answered]
            if free:
                answers[i] = (j, free[0])
                answered.add((j, free[0]))
                break
    unanswered = [(j, p) for j, m in enumerate(messages) if m["role"] == "assistant"
                  for p in range(len(m.get("tool_calls") or ())) if (j, p) not in answered]
    return answers, unanswered


ODD_CALLS = st.sampled_from([
    {"id": "a"}, {"id": "b"}, {"call_id": "a"}, {"id": ""}, {"id": None}, {"id": 7}, {"call_id": 7},
    {}, "not a call",
])


@st.composite
def anything(draw: Any) -> list[dict[str, Any]]:
    """Any order of calls and results: reused, numeric, missing and odd ids, strays and orphans."""
    messages: list[dict[str, Any]] = []
    for kind in draw(st.lists(ROLES, max_size=16)):
        if kind == "assistant_calls":
            messages.append({"role": "assistant", "tool_calls": draw(st.lists(ODD_CALLS, min_size=1, max_size=4))})
        elif kind == "tool":
            messages.append({"role": "tool", "tool_call_id": draw(st.sampled_from(["a", "b", "", None, 7, "7"]))})
        else:
            messages.append({"role": kind, "content": "x"})
    return messages


@settings(max_examples=examples(100))
@given(anything())
def test_match_results_follows_the_rule_on_any_order(messages: list[dict[str, Any]]) -> None:
    # The fast form keeps one tuple per id until a second call reuses it: same answers as the
    # literal scan, on valid and invalid lists alike.
    assert match_results(messages) == _rule(messages)


def _problems_block_by_block(messages: list[dict[str, Any]], allow_pending: bool) -> list[str]:
    """The validity check without the in-order fast path: every block through the id lists."""
    problems: list[str] = []
    index, n = 0, len(messages)
    while index < n:
        message = messages[index]
        if message["role"] == "tool":
            problems.append(f"message {index}: tool result {message.get('tool_call_id')!r} follows no "
                            "assistant call it could answer")
            index += 1
            continue
        if message["role"] != "assistant" or not message.get("tool_calls"):
            index += 1
            continue
        ids = [str((c.get("id") or c.get("call_id") or "") if isinstance(c, dict) else "") for c in message["tool_calls"]]
        if not all(ids):
            problems.append(f"message {index}: a tool call without an id")
        open_ids = list(ids)
        j = index + 1
        while j < n and messages[j]["role"] == "tool":
            ident = str(messages[j].get("tool_call_id") or "")
            if ident in open_ids:
                open_ids.remove(ident)
            else:
                problems.append(f"message {j}: tool result {ident!r} answers no open call of the assistant "
                                f"message {index}")
            j += 1
        if open_ids and not (allow_pending and j >= n):
            missing = sorted(open_ids, key=ids.index)
            problems.append(f"message {index}: tool call(s) {', '.join(repr(m) for m in missing)} have no "
                            "result before the next message")
        index = j
    return problems


@settings(max_examples=examples(100))
@given(st.one_of(anything(), garbage(), histories().map(lambda case: case[0])), st.booleans())
@example([asst("a", "b"), result("b"), result("a"), USER], False)
@example([asst("a"), result("b"), USER], False)
def test_pairing_problems_match_the_block_by_block_check(messages: list[dict[str, Any]], pending: bool) -> None:
    assert pairing_problems(messages, allow_pending=pending) == _problems_block_by_block(messages, pending)


@st.composite
def leftovers_then_blocks(draw: Any) -> list[dict[str, Any]]:
    """Unanswered calls and stray results with the ids that later in-order blocks reuse: the
    case where pairing a block by position could differ from the nearest-call rule."""
    messages: list[dict[str, Any]] = [USER]
    for _ in range(draw(st.integers(1, 8))):
        group = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=3))
        messages.append(asst(*group))
        answered = draw(st.sampled_from(["all", "none", "some", "shuffled", "extra"]))
        if answered == "all":
            messages.extend(result(i) for i in group)
        elif answered == "some":
            messages.extend(result(i) for i in group[: len(group) - 1])
        elif answered == "shuffled":
            messages.extend(result(i) for i in reversed(group))
        elif answered == "extra":
            messages.extend(result(i) for i in [*group, draw(st.sampled_from(["a", "b"]))])
        if draw(st.booleans()):
            messages.append(USER)
    return messages


@settings(max_examples=examples(100))
@given(st.one_of(anything(), garbage(), leftovers_then_blocks(), histories().map(lambda case: case[0])))
def test_a_block_answered_in_order_pairs_by_position_as_the_rule_does(messages: list[dict[str, Any]]) -> None:
    answers, _ = match_results(messages)
    for index, message in enumerate(messages):
        if message.get("role") != "assistant":
            assert not answered_in_order(messages, index)
            continue
        if answered_in_order(messages, index):
            for position in range(len(message["tool_calls"])):
                assert answers[index + 1 + position] == (index, position)


def test_answered_in_order_takes_only_the_usual_form() -> None:
    messages = [USER, asst("a", "a"), result("a"), result("a"), asst("b", "c"), result("c"), result("b"),
                asst("d"), USER, result("d"), asst("e"), result("e")]
    assert answered_in_order(messages, 1)  # equal ids: first-come
    assert not answered_in_order(messages, 4)  # answered, but not in the calls' order
    assert not answered_in_order(messages, 7)  # its result comes after another message
    assert answered_in_order(messages, 10)
    assert not answered_in_order([USER, asst("a")], 1)  # pending
    assert not answered_in_order([USER, {"role": "assistant", "tool_calls": [{"id": ""}]}, result("")], 1)

"""The pairing proof of a forced compression's normalising pass, against the full check.

``Session.compress`` normalises and estimates the host's list in one pass
(``sdk.normalize_for_compression``); the same pass shows the list valid by the provider pairing
rule when it is in the usual form (each call's result right after it, in order), and the engine's
input check (``sanitize_tool_pairs`` -> ``pairing_problems``) then trusts that proof instead of
walking the list again (``pairing.holding_valid``). A proof must never say "valid" of a list
``pairing_problems`` refuses; a list it cannot show valid goes to the full check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session, pairing
from hermes_core.pairing import holding_valid, pairing_problems
from hermes_core.sdk import normalize_for_compression, normalize_messages
from hermes_core.tokens import estimate_messages_tokens

IDS = ["c1", "c2", "c3"]  # a small pool: providers reuse ids


def _call(ident: Any, shape: str) -> Any:
    if shape == "not a dict":
        return "call"
    fn: dict[str, Any] = {"name": "bash", "arguments": json.dumps({"command": f"ls {ident}"})}
    if shape == "dict arguments":
        fn["arguments"] = {"command": "ls"}
    elif shape == "no name":
        del fn["name"]
    call: dict[str, Any] = {"type": "function", "function": fn}
    if shape == "call_id":
        call["call_id"] = ident
    elif shape == "no function":
        call = {"id": ident, "name": "bash"}
    else:
        call["id"] = ident
    return call


@st.composite
def block(draw: st.DrawFn) -> tuple[list[Any], bool]:
    """Messages of one step and whether they are valid in the usual form on their own."""
    kind = draw(st.sampled_from(["user", "text", "calls", "calls", "calls", "orphan", "anthropic"]))
    if kind == "user":
        return [{"role": "user", "content": draw(st.text(max_size=20))}], True
    if kind == "text":
        return [{"role": "assistant", "content": draw(st.one_of(st.none(), st.text(max_size=20)))}], True
    if kind == "orphan":
        return [{"role": "tool", "tool_call_id": draw(st.sampled_from(IDS)), "content": "x"}], False
    if kind == "anthropic":
        ident = draw(st.sampled_from(IDS))
        answered = draw(st.booleans())
        out: list[Any] = [{"role": "assistant", "content": [
            {"type": "text", "text": "running"},
            {"type": "tool_use", "id": ident, "name": "bash", "input": {"command": "ls"}}]}]
        if answered:
            out.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": ident, "content": "ok"}]})
        return out, answered
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=3))
    shape = draw(st.sampled_from(
        ["usual"] * 6 + ["call_id", "dict arguments", "no name", "no function", "not a dict"]))
    bad_id = draw(st.sampled_from([None, None, None, None, "", 7]))
    calls = [_call(ident, shape) for ident in ids]
    if bad_id is not None:
        calls[-1] = _call(bad_id, "usual")
    content = draw(st.sampled_from(["", None, "let me look", [{"type": "text", "text": "see"}]]))
    order = list(range(len(ids)))
    fault = draw(st.sampled_from(["none"] * 5 + ["reversed", "missing", "extra", "interrupted"]))
    if fault == "reversed":
        order.reverse()
    elif fault == "missing":
        order.pop()
    elif fault == "extra":
        order.append(order[0])
    results: list[Any] = [
        {"role": "tool", "tool_call_id": ids[p] if p != len(ids) - 1 or bad_id is None else bad_id,
         "content": f"result {p}"}
        for p in order
    ]
    if fault == "interrupted" and results:
        results.insert(len(results) - 1, {"role": "user", "content": "wait"})
    usual = (
        shape in ("usual", "call_id", "dict arguments", "no name") and bad_id is None
        and fault == "none"
    )
    return [{"role": "assistant", "content": content, "tool_calls": calls}, *results], usual


@given(st.lists(block(), max_size=10), st.booleans())
@settings(max_examples=400, deadline=None)
def test_the_proof_never_passes_what_the_full_check_refuses(blocks: list[tuple[list[Any], bool]], cut: bool) -> None:
    messages = [m for found, _ in blocks for m in found]
    if cut and messages:
        messages = messages[:-1]  # ends mid-block: calls in flight
    out, total, proven = normalize_for_compression(messages)
    assert out == normalize_messages(messages)
    assert total == estimate_messages_tokens(out)
    problems = pairing_problems(out)
    if proven:
        assert problems == []
    if not cut and all(usual for _, usual in blocks):
        # A list in the usual form is shown valid (the full check is then never run).
        assert proven and problems == []


def test_pending_calls_at_the_end_are_proven_valid() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    messages = [{"role": "user", "content": "go"},
                {"role": "assistant", "content": "", "tool_calls": [call, {**call, "id": "c2"}]},
                {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert normalize_for_compression(messages)[2] is True
    assert normalize_for_compression(messages[:2])[2] is True
    # The same block followed by anything but its results is not.
    assert normalize_for_compression([*messages, {"role": "user", "content": "next"}])[2] is False


def test_a_held_proof_answers_only_for_that_list_at_that_length_inside_the_block() -> None:
    # An invalid list is used on purpose: only the hold can make it pass.
    messages: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": "c1", "content": "orphan"}]
    assert pairing_problems(messages)
    with holding_valid(messages):
        assert pairing_problems(messages) == []
        assert pairing_problems(list(messages))  # another list object: walked
        assert pairing_problems(messages, allow_pending=False)  # proven for pending calls only
        messages.append({"role": "user", "content": "more"})
        assert pairing_problems(messages)  # another length: walked
        messages.pop()
    assert pairing_problems(messages)
    with holding_valid(None):
        assert pairing_problems(messages)


def _history(turns: int, *, reverse: bool = False) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "start the refactor"}]
    for i in range(turns):
        calls = [{"id": f"call_{i % 3}_{p}", "type": "function",
                  "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{i}_{p}.py"})}}
                 for p in range(2)]
        results = [{"role": "tool", "tool_call_id": c["id"], "content": f"# module {i}\n" + "x = 1\n" * 300}
                   for c in calls]
        messages += [{"role": "assistant", "content": "", "tool_calls": calls},
                     *(reversed(results) if reverse else results)]
    messages.append({"role": "user", "content": "keep going"})
    return messages


@pytest.mark.parametrize("reverse", [False, True], ids=["usual", "results_reversed"])
def test_a_forced_compress_hands_its_proof_to_the_engines_input_check(
    tmp_path: Path, monkeypatch: Any, reverse: bool
) -> None:
    from hermes_plugins.compressor import engine

    seen: list[tuple[bool, list[str]]] = []
    real = engine.sanitize_tool_pairs

    def spy(messages: list[dict[str, Any]]) -> Any:
        held = pairing._proven.get()
        if not seen:  # the input check (the first call)
            seen.append((held is not None and held[0] is messages, pairing_problems(messages)))
        return real(messages)

    monkeypatch.setattr(engine, "sanitize_tool_pairs", spy)
    session = Session.open(cwd=tmp_path, home=tmp_path, model="test-model", provider="openai",
                           context_length=32_000, persist=False, env={})
    messages = _history(60, reverse=reverse)
    result = session.compress(messages, force=True)
    assert len(result.messages) < len(messages)
    assert pairing_problems(result.messages) == []
    # Usual form: the engine's check is answered by the session's pass; results in another
    # (valid) order: no proof, the full check runs and finds nothing to repair.
    assert seen == [(not reverse, [])]
    assert pairing._proven.get() is None  # the hold ended with the call
    assert (session.engine.last_compression_report or {}).get("tool_pairs_repaired") == 0

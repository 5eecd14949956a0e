"""The pairing proof of a forced compression's normalising pass, against the full check.

``Session.compress`` normalises and estimates the host's list in one pass
(``intake.read_history``); the same pass shows the list valid by the provider pairing
rule when it is in the usual form (each call's result right after it, in order), and the engine's
input check (``sanitize_tool_pairs`` -> ``pairing_problems``) then trusts that proof instead of
walking the list again (handed over explicitly: ``ContextEngine.known_input``). A proof must
never say "valid" of a list ``pairing_problems`` refuses; a list it cannot show valid goes to
the full check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.config import load_config
from hermes_core.engine import ContextEngine, KnownInput
from hermes_core.intake import read_history
from hermes_core.pairing import pairing_problems
from hermes_core.sdk import normalize_messages
from hermes_core.tokens import estimate_messages_tokens
from hermes_plugins.archive.plugin import archive_of

from hypothesis_budget import examples

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
@settings(max_examples=examples(200), deadline=None)
def test_the_proof_never_passes_what_the_full_check_refuses(blocks: list[tuple[list[Any], bool]], cut: bool) -> None:
    messages = [m for found, _ in blocks for m in found]
    if cut and messages:
        messages = messages[:-1]  # ends mid-block: calls in flight
    found = read_history(messages)
    out, total, proven = found.messages, found.estimate, found.proven
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
    assert read_history(messages).proven is True
    assert read_history(messages[:2]).proven is True
    # The same block followed by anything but its results is not.
    assert read_history([*messages, {"role": "user", "content": "next"}]).proven is False


def test_a_known_proof_answers_only_for_that_list_at_that_length() -> None:
    # An invalid list is used on purpose: only the proof handed over can make it pass, and it
    # never changes what pairing_problems itself says (a pure function of the list).
    messages: list[dict[str, Any]] = [{"role": "tool", "tool_call_id": "c1", "content": "orphan"}]
    engine = ContextEngine()
    assert not engine.input_valid(messages)
    engine.known_input = KnownInput(messages=messages, length=len(messages), estimate=7, valid=True)
    assert engine.input_valid(messages) and engine.input_estimate(messages) == 7
    assert pairing_problems(messages)  # the proof lives on the engine, not in the function
    assert not engine.input_valid(list(messages))  # another list object
    assert engine.input_estimate(list(messages)) == estimate_messages_tokens(messages)
    messages.append({"role": "user", "content": "more"})
    assert not engine.input_valid(messages)  # another length
    messages.pop()
    engine.known_input = KnownInput(messages=messages, length=len(messages))
    assert not engine.input_valid(messages)  # not shown valid
    assert engine.input_estimate(messages) == estimate_messages_tokens(messages)


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

    def spy(given: list[dict[str, Any]]) -> Any:
        seen.append((given is messages, pairing_problems(given)))
        return real(given)

    monkeypatch.setattr(engine, "sanitize_tool_pairs", spy)
    session = Session.open(cwd=tmp_path, home=tmp_path, model="test-model", provider="openai",
                           context_length=32_000, persist=False, env={})
    messages = _history(60, reverse=reverse)
    result = session.compress(messages, force=True)
    assert len(result.messages) < len(messages)
    assert pairing_problems(result.messages) == []
    # Usual form: the engine's input check is answered by the session's pass (the full check
    # never sees the input list); results in another (valid) order: no proof, the full check
    # runs and finds nothing to repair.
    assert [problems for given, problems in seen if given] == ([[]] if reverse else [])
    assert session.engine.known_input is None  # handed over for the call only
    assert (session.engine.last_compression_report or {}).get("tool_pairs_repaired") == 0


# --- the archive's columns, read in the same pass -----------------------------------------


@st.composite
def archived_history(draw: st.DrawFn) -> list[Any]:
    """Messages of every kind the archive tells apart: turn starts, summaries (ours and other
    agents'), replacements of an earlier compaction, tool results with odd call ids, Anthropic
    blocks (converted by the pass)."""
    out: list[Any] = []
    for kind in draw(st.lists(st.sampled_from(
        ["user", "summary", "compressed", "replacement", "replaced_user", "call", "odd_result",
         "anthropic", "parts"]), max_size=14)):
        if kind == "user":
            out.append({"role": "user", "content": draw(st.text(max_size=12))})
        elif kind == "summary":
            out.append({"role": "user", "content": "summary", "_summary": "hermes-core"})
        elif kind == "compressed":
            out.append({"role": "user", "content": "old summary", "_compressed_summary": True})
        elif kind == "replacement":
            out.append({"role": "assistant", "content": "[ref m1.2]", "_ref": "m1.2"})
        elif kind == "replaced_user":
            out.append({"role": "user", "content": "[refs]", "_ref": "m2.1", "_summary": "hermes-core"})
        elif kind == "call":
            ident = draw(st.sampled_from(IDS))
            out += [{"role": "assistant", "content": "", "tool_calls": [_call(ident, "usual")]},
                    {"role": "tool", "tool_call_id": ident, "content": draw(st.text(max_size=12))}]
        elif kind == "odd_result":
            out.append({"role": "tool", "tool_call_id": draw(st.sampled_from([None, 7, ""])), "content": "x"})
        elif kind == "anthropic":
            out += [{"role": "assistant", "content": [
                        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a.py"}}]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"},
                        {"type": "text", "text": "and go on"}]}]
        else:
            out.append({"role": "user", "content": [{"type": "text", "text": "look"}],
                        "tool_call_id": "stray"})
    return out


@given(archived_history())
@settings(max_examples=examples(200), deadline=None)
def test_the_pass_reads_the_columns_the_archive_would(messages: list[Any]) -> None:
    from hermes_plugins.archive import diff

    found = read_history(messages, scan=True)
    assert found.scan is not None
    normalized = found.messages
    kept, tags, contents, call_ids, odd, summaries = diff._scan(normalized, [])  # its own pass
    assert summaries is None
    held = diff._scan(normalized, [], found.scan)
    assert held[0] == kept
    assert [t is diff._EARLIER or t for t in held[1]] == [t is diff._EARLIER or t for t in tags]
    assert held[2] == contents and all(held[2][j] is contents[j] for j in contents)
    assert list(contents) == list(range(len(normalized)))
    assert held[3] == call_ids
    assert sorted(call_ids) == [j for j, m in enumerate(normalized) if m.get("role") == "tool"]
    # The messages that are not plain, by position (the same dicts), and only those.
    assert held[4].keys() == odd.keys() and all(held[4][j] is odd[j] is normalized[j] for j in odd)
    assert set(odd) == {j for j, m in enumerate(normalized) if not (
        type(m.get("content")) is str and type(m.get("role")) is str and m["role"]
        and set(m) <= {"role", "content", "tool_call_id"}
        and ("tool_call_id" not in m or (m["role"] == "tool" and type(m["tool_call_id"]) is str and m["tool_call_id"])))}
    users = [j for j, t in enumerate(tags) if t == "user"]
    assert {j for j in users if normalized[j].get("_summary") or normalized[j].get("_compressed_summary")} \
        == {j for j in users if j in held[5]}


@given(archived_history(), st.lists(st.booleans(), max_size=20), st.integers(0, 2))
@settings(max_examples=examples(150), deadline=None)
def test_recording_with_the_held_columns_archives_the_same(messages: list[Any], keep: list[bool], inserts: int) -> None:
    from hermes_plugins.archive.memory_store import MemoryArchiveStore
    from hermes_plugins.archive.session_archive import SessionArchive

    found = read_history(messages, scan=True)
    before = found.messages
    after = [m for i, m in enumerate(before) if i < len(keep) and keep[i]]
    for k in range(inserts):
        after.insert(min(k * 2, len(after)), {"role": "user", "content": f"summary {k}"})

    def record(held: bool) -> tuple[Any, list[dict[str, Any]]]:
        store = MemoryArchiveStore()
        archive = SessionArchive(session_id="s", store=store)
        out = archive.record(before, after, scan=found.scan if held else None)
        store.archive_flush()
        rows = sorted(store._rows.get("s", {}).values(), key=lambda r: r["seq"])
        return out, [{k: v for k, v in r.items() if k not in ("created_at", "_order")} for r in rows]

    assert record(held=True) == record(held=False)


def test_a_forced_compress_records_the_archive_from_its_one_pass(tmp_path: Path, monkeypatch: Any) -> None:
    from hermes_plugins.archive import session_archive

    seen: list[bool] = []
    real = session_archive._scan

    def spy(before: Any, after: Any, scan: Any = None) -> Any:
        seen.append(scan is not None)
        return real(before, after, scan)

    monkeypatch.setattr(session_archive, "_scan", spy)
    session = Session.open(cwd=tmp_path, home=tmp_path, model="test-model", provider="openai",
                           context_length=32_000, persist=False, env={})
    messages = _history(60)
    result = session.compress(messages, force=True)
    assert seen == [True]
    assert len(archive_of(session)) > 0
    ref = result.messages[1].get("_ref") or next(m["_ref"] for m in result.messages if m.get("_ref"))
    assert archive_of(session).get(ref)["text"]


# --- the collector is the host's -------------------------------------------------------------


def test_a_forced_compress_never_touches_the_garbage_collector(tmp_path: Path, monkeypatch: Any) -> None:
    # gc.disable() acts on every thread of the host, and two concurrent compressions would end
    # each other's pauses (issue 33): the compaction leaves the collector to the host.
    import gc

    calls: list[str] = []
    for name in ("disable", "enable", "collect", "freeze", "set_threshold"):
        real = getattr(gc, name)
        monkeypatch.setattr(gc, name, lambda *a, _n=name, _r=real, **k: calls.append(_n) or _r(*a, **k))
    for archive in (False, True):
        config = load_config(home=tmp_path, env={}, data={"archive": {"enabled": archive}})
        session = Session.open(cwd=tmp_path, home=tmp_path, model="test-model", provider="openai",
                               context_length=32_000, persist=False, config=config, env={})
        result = session.compress(_history(60), force=True)
        assert len(result.messages) < len(_history(60))
        session.close()
    assert calls == []


# --- the prefix read of a list, against the message-by-message loop ---------------------------


@st.composite
def mixed_history(draw: st.DrawFn) -> list[Any]:
    """Blocks of calls in every shape (valid or not) and the kinds the archive tells apart,
    with or without content parts; sometimes cut mid-block (calls in flight)."""
    out: list[Any] = []
    for _ in range(draw(st.integers(0, 6))):
        out += draw(block())[0] if draw(st.booleans()) else draw(archived_history())
        if draw(st.integers(0, 4)) == 0:
            out.append(draw(st.sampled_from([
                {"role": "tool", "content": "no id"},  # plain: two keys
                {"role": "tool", "tool_call_id": "c1", "content": "x", "name": "bash"},
                {"role": "tool", "tool_call_id": "c2", "content": None},
                {"role": "tool", "tool_call_id": "c1", "content": "x", "_ref": "m1.1"},
                {"role": "user", "content": "x", "_injected": "system-reminder"},
                {"role": "", "content": "no role"},
                {"content": "no role at all"},
                {"role": "assistant", "content": "done", "tool_calls": []},
            ])))
    if out and draw(st.booleans()):
        out.pop()
    if draw(st.booleans()):  # no content parts: the prefix read takes it all when valid
        out = [m for m in out if type(m.get("content")) is not list]
    return out


@given(mixed_history(), st.booleans())
@settings(max_examples=examples(250), deadline=None)
def test_the_prefix_read_of_a_list_gives_what_the_loop_does(messages: list[Any], scan: bool) -> None:
    from hermes_core.intake import _read_plain

    found = read_history(messages, scan=scan)
    each = read_history(tuple(messages), scan=scan)  # not a list: the loop from the start
    assert found.messages == each.messages
    assert (found.estimate, found.proven, found.scan) == (each.estimate, each.proven, each.scan)
    stop = _read_plain(messages, None)[0]
    if stop == len(messages):  # read whole by the prefix: the host's list and dicts as they are
        assert found.messages is messages and found.proven
        if found.scan is not None:
            assert all(found.scan.odd[j] is messages[j] for j in found.scan.odd)
    usual = all(type(m.get("content")) is not list for m in messages) and not pairing_problems(messages)
    if usual and found.proven:
        assert stop == len(messages)


@given(mixed_history(), st.lists(st.tuples(st.integers(0, 60), st.sampled_from(
    [{"role": "user", "content": "summary", "_summary": "claude-code"},
     {"role": "assistant", "content": "summary", "_compressed_summary": True},
     {"role": "tool", "tool_call_id": "c1", "content": "x", "_summary": "codex"},
     {"role": "user", "content": "not one", "_summary": ""}])), max_size=4))
@settings(max_examples=examples(150), deadline=None)
def test_summary_positions_from_the_held_pass_are_the_full_walks(messages: list[Any], summaries: list[Any]) -> None:
    from hermes_plugins.compressor.engine import _summary_positions
    from hermes_plugins.compressor.prune import plan_free_passes

    for at, summary in summaries:
        messages.insert(min(at, len(messages)), dict(summary))
    found = read_history(messages, scan=True)
    source = found.messages
    pruned = plan_free_passes(source, protect_tail_count=2, protect_tail_tokens=50).messages
    walked = _summary_positions(pruned)
    assert _summary_positions(pruned, source, found.scan) == walked
    assert _summary_positions(pruned, source) == walked  # not handed over: the walk


def test_a_forced_compress_finds_its_summaries_through_the_held_pass(tmp_path: Path, monkeypatch: Any) -> None:
    from hermes_plugins.compressor import engine

    seen: list[bool] = []
    real = engine._summary_positions

    def spy(messages: Any, source: Any = None, scan: Any = None) -> Any:
        seen.append(scan is not None)
        return real(messages, source, scan)

    monkeypatch.setattr(engine, "_summary_positions", spy)
    session = Session.open(cwd=tmp_path, home=tmp_path, model="test-model", provider="openai",
                           context_length=32_000, persist=False, env={})
    messages = _history(60)
    result = session.compress(messages, force=True)
    assert seen == [True] and len(result.messages) < len(messages)

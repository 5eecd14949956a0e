"""Phase 2, boundaries (§8): head decay, the token-budget tail cut and its anchors."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.tokens import estimate_messages_tokens
from hermes_plugins.compressor.boundaries import (
    align_backward,
    align_forward,
    find_tail_cut,
    keep_bridge,
    last_actionable_user,
    last_assistant,
    min_tail_messages,
)
from hermes_plugins.compressor.framing import (
    SUMMARY_KEY,
    compose_standalone,
    frame_summary,
)
from hermes_plugins.compressor.prune import message_tokens

from compressor_support import (
    assistant,
    call,
    make_engine,
    system,
    tool,
    user,
    work_history,
)
from hypothesis_budget import examples

HANDOFF = {"role": "assistant", "content": compose_standalone(frame_summary("## Goal\nold")), SUMMARY_KEY: True}


def test_align_forward_skips_tool_results() -> None:
    messages = [user("a"), assistant("", call("x")), tool("x", "r"), tool("x", "r"), user("b")]
    assert align_forward(messages, 2) == 4
    assert align_forward(messages, 4) == 4


def test_align_backward_keeps_a_call_with_its_results() -> None:
    messages = [user("a"), assistant("", call("x"), call("y")), tool("x", "r"), tool("y", "r"), user("b")]
    assert align_backward(messages, 3) == 1
    assert align_backward(messages, 4) == 1
    assert align_backward(messages, 2) == 1  # fires when the previous message is the caller
    assert align_backward(messages, 1) == 1
    assert align_backward(messages, 0) == 0


def test_minimum_tail_floor() -> None:
    assert min_tail_messages(100, 1, 20) == 8
    assert min_tail_messages(100, 1, 2) == 3
    assert min_tail_messages(6, 1, 20) == 3
    assert min_tail_messages(3, 1, 20) == 0


def test_tail_cut_by_budget_with_soft_ceiling() -> None:
    messages = [system()] + [user("x" * 400) if i % 2 == 0 else assistant("y" * 400) for i in range(40)]
    per = message_tokens(messages[1])
    cut = find_tail_cut(messages, 1, budget=per * 10, protect_last_n=4)
    # The 1.5x soft ceiling lets ~15 messages in; never fewer than the floor.
    assert 41 - cut == 15
    assert find_tail_cut(messages, 1, budget=1, protect_last_n=4) <= 41 - 3


def test_tail_never_starts_with_an_orphan_result() -> None:
    messages = [system(), user("go")]
    for i in range(10):
        messages += [assistant("", call(f"a{i}"), call(f"b{i}")), tool(f"a{i}", "r" * 800), tool(f"b{i}", "r" * 800)]
    messages += [assistant("all done"), user("thanks")]
    for budget in (50, 300, 700, 1_500, 3_000):
        cut = find_tail_cut(messages, 1, budget, protect_last_n=3)
        assert messages[cut]["role"] != "tool"
        if messages[cut - 1].get("tool_calls"):
            raise AssertionError("cut separates a call from its results")


def test_last_user_request_and_reply_are_always_in_the_tail() -> None:
    messages = [system(), user("the real request")]
    messages.append(assistant("visible reply"))
    for i in range(12):
        messages += [assistant("", call(f"c{i}")), tool(f"c{i}", "z" * 4_000)]
    cut = find_tail_cut(messages, 1, budget=200, protect_last_n=3)
    assert cut <= 2  # the reply (index 2) is kept even though the budget says otherwise
    user_index = last_actionable_user(messages, 1)
    assert user_index == 1


def test_latest_request_at_the_head_is_condensed_with_its_first_exchange() -> None:
    # Nothing new before the latest request: condensing its first exchange is the only progress.
    messages = [system(), HANDOFF, user("refactor the parser"), assistant("", call("a")), tool("a", "q" * 5_000)]
    for i in range(8):
        messages += [assistant("", call(f"c{i}")), tool(f"c{i}", "q" * 5_000)]
    messages.append(assistant("half way"))
    cut = find_tail_cut(messages, 1, budget=500, protect_last_n=3)
    assert cut > 2  # the request went into the middle (the summary quotes it)


def test_upstream_assistant_anchor_cases() -> None:
    messages = [HANDOFF, user("u"), assistant("", call("x")), tool("x", "r")]
    assert last_assistant(messages, 0) == 2  # summary ignored, tool-call-only fallback
    with_parts = [user("u"), {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}, user("v")]
    assert last_assistant(with_parts, 0) == 1
    assert last_assistant(with_parts, 2) == -1


def test_bridge_keeps_what_the_latest_request_answers() -> None:
    messages = [system(), user("a"), assistant("reply a"), user("b"), assistant("", call("x")), tool("x", "r"), user("c")]
    assert keep_bridge(messages, 1, 6) == 4  # the call group before "c" joins the tail
    assert keep_bridge(messages, 1, 3) == 3  # "b" is not the latest request
    assert keep_bridge(messages[:4], 1, 3) == 2
    assert keep_bridge(messages, 3, 3) == 3  # never empties the middle


def test_protect_first_n_decays_after_a_compression() -> None:
    engine = make_engine(data={"compression": {"protect_first_n": 3}})
    messages = work_history(10)
    assert engine._head_end(messages) == 4
    engine.compression_count = 1
    assert engine._head_end(messages) == 1


def test_protect_first_n_decays_when_a_handoff_is_found_after_a_restart() -> None:
    engine = make_engine(data={"compression": {"protect_first_n": 3}})
    messages = work_history(10)
    resumed = [messages[0], user("earlier ask"), HANDOFF] + messages[1:]
    assert engine._head_end(resumed) == 1
    far = messages[:12] + [HANDOFF] + messages[12:]
    assert engine._head_end(far) == 4  # a handoff far from the head is not a resumed head


def _chat(sizes: list[int]) -> list[dict[str, Any]]:
    return [system()] + [user("u" * (4 * s)) if i % 2 == 0 else assistant("a" * (4 * s))
                         for i, s in enumerate(sizes)]


def test_forced_cut_frees_a_budget_on_a_history_just_over_it() -> None:
    # 30 messages of ~100 tokens, a budget of ~2,000: the history is 1.5x the budget.
    messages = _chat([100] * 30)
    per = message_tokens(messages[1])
    budget = per * 20
    kept = lambda cut: sum(message_tokens(m) for m in messages[cut:])  # noqa: E731
    plain = find_tail_cut(messages, 1, budget, 3)
    forced = find_tail_cut(messages, 1, budget, 3, free_at_least=budget)
    assert kept(plain) >= per * 19  # the plain cut condenses only the excess over the budget
    assert kept(forced) <= per * 10 and 31 - forced >= 3
    # far over the budget the forced cut is the plain one
    long = _chat([100] * 200)
    assert find_tail_cut(long, 1, budget, 3, free_at_least=budget) == find_tail_cut(long, 1, budget, 3)


@settings(max_examples=examples(60), deadline=None)
@given(sizes=st.lists(st.integers(min_value=1, max_value=400), min_size=6, max_size=40),
       budget=st.integers(min_value=50, max_value=4_000))
def test_forced_cut_condenses_a_budget_or_all_but_a_tenth(sizes: list[int], budget: int) -> None:
    messages = _chat(sizes)
    n = len(messages)
    cut = find_tail_cut(messages, 1, budget, 3, free_at_least=budget)
    total = sum(message_tokens(m) for m in messages[1:])
    kept = sum(message_tokens(m) for m in messages[cut:])
    floor = sum(message_tokens(m) for m in messages[n - 3:])  # the minimum tail
    assert 1 <= cut <= n - 3
    # the middle holds a budget's worth, or everything but the newest tenth (message-granular)
    assert kept <= max(total - budget, int(total * 0.1), floor) + (0 if total > budget else floor)
    # never more than the unforced cut keeps
    assert cut >= find_tail_cut(messages, 1, budget, 3)


def test_forced_compression_of_a_history_just_over_the_tail_budget_frees_a_budget() -> None:
    # ~7.6k tokens of conversation the free passes cannot shrink, just over the 32k tail budget
    # (5,440): the plain cut would condense only the ~2k excess.
    history = [system()] + [user(f"question {i}: " + "why " * 90) if i % 2 == 0
                            else assistant(f"answer {i}: " + "because " * 45) for i in range(80)]
    engine = make_engine(32_000)
    before = estimate_messages_tokens(history)
    out = engine.compress(list(history), force=True)
    report = engine.last_compression_report
    assert report["phases"]["demoted"] == 0 and report["status"] == "compressed"
    assert 1 - estimate_messages_tokens(out) / before > 0.4  # the plain cut saved ~15%


def test_a_forced_compression_counts_what_the_free_passes_freed(monkeypatch: Any) -> None:
    import hermes_plugins.compressor.engine as engine_module

    seen: list[int] = []

    def spy(*args: Any, free_at_least: int = 0, **kwargs: Any) -> int:
        seen.append(free_at_least)
        return find_tail_cut(*args, free_at_least=free_at_least, **kwargs)

    monkeypatch.setattr(engine_module, "find_tail_cut", spy)
    # Old results the free passes demote free far more than a tail budget: nothing left to free.
    history = [system()] + [m for i in range(40) for m in (
        user(f"step {i}"), assistant("", call(f"c{i}", "read_file", path=f"src/m{i}.py")),
        tool(f"c{i}", f"line {i}\n" * 400), assistant(f"read {i}"))]
    engine = make_engine(64_000)
    engine.compress(list(history), force=True)
    assert engine.last_compression_report["phases"]["demoted"] > 0
    assert seen and set(seen) == {0}
    # Nothing demoted: the whole budget is asked for.
    seen.clear()
    chat = [system()] + [user("q " * 300) if i % 2 == 0 else assistant("a " * 300) for i in range(60)]
    engine = make_engine(64_000)
    engine.compress(list(chat), force=True)
    assert seen and set(seen) == {engine.tail_token_budget}
    seen.clear()
    engine = make_engine(64_000)
    engine.compress(list(chat), current_tokens=engine.threshold_tokens)  # not forced: nothing asked
    assert set(seen) <= {0}

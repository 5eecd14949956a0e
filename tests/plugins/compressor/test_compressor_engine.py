"""The engine as a host sees it (§1.2, §6, §13): usage, decisions, anti-thrash, lifecycle, report."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_core import Config, PluginHost
from hermes_core.testing.conformance import EngineConformance
from hermes_core.tokens import estimate_messages_tokens
from hermes_plugins.compressor.engine import CompressorEngine
from hermes_plugins.compressor.framing import SUMMARY_KEY
from hermes_plugins.compressor.plugin import hermes_context_engines, hermes_summarizers

from compressor_support import (
    FakeClock,
    assistant,
    call,
    make_engine,
    snapshot,
    summary_of,
    system,
    tool,
    user,
    work_history,
)


class TestCompressorConformance(EngineConformance):
    engine_name = "compressor"


def test_registered_as_the_compressor_engine_and_extractive_summariser() -> None:
    assert hermes_context_engines() == {"compressor": CompressorEngine}
    assert "extractive" in hermes_summarizers()
    host = PluginHost.create(only=())
    engine = host.create_engine("compressor", Config())
    assert isinstance(engine, CompressorEngine) and engine.name == "compressor"
    assert engine.protect_first_n == 3 and engine.protect_last_n == 20


# --- usage and decisions (upstream test_context_compressor, 100K window, threshold 0.85) ------


def upstream_engine() -> CompressorEngine:
    return make_engine(100_000, data={"compression": {"threshold": 0.85}})


def test_threshold_decisions() -> None:
    engine = upstream_engine()
    assert engine.threshold_tokens == 85_000
    engine.last_prompt_tokens = 50_000
    assert engine.should_compress() is False
    engine.last_prompt_tokens = 90_000
    assert engine.should_compress() is True
    engine.last_prompt_tokens = 85_000
    assert engine.should_compress() is True
    assert engine.should_compress(prompt_tokens=50_000) is False
    assert engine.should_compress(prompt_tokens=90_000) is True


def test_update_from_response_stores_prompt_tokens_only_for_decisions() -> None:
    engine = upstream_engine()
    engine.update_from_response({"prompt_tokens": 5_000, "completion_tokens": 1_000, "total_tokens": 6_000})
    assert (engine.last_prompt_tokens, engine.last_completion_tokens, engine.last_total_tokens) == (5_000, 1_000, 6_000)
    assert engine.last_real_prompt_tokens == 5_000
    engine.update_from_response({})
    assert engine.last_prompt_tokens == 0 and engine.last_real_prompt_tokens == 5_000
    engine.update_from_response({"prompt_tokens": 10, "completion_tokens": 10_000_000})
    assert engine.should_compress() is False


def test_get_status() -> None:
    engine = upstream_engine()
    engine.update_from_response({"prompt_tokens": 50_000})
    status = engine.get_status()
    assert status["usage_percent"] == 50.0
    for key in ("last_prompt_tokens", "threshold_tokens", "context_length", "compression_count",
                "tail_token_budget", "max_summary_tokens", "blocked_reason", "recent_compressions",
                "thrash_window_turns", "ineffective_compression_count"):
        assert key in status
    assert status["blocked_reason"] is None and status["thrash_window_turns"] == 20


def test_short_conversations_are_returned_unchanged() -> None:
    engine = make_engine(data={"compression": {"protect_first_n": 2, "protect_last_n": 2}})
    messages = [user("a"), assistant("b"), user("c"), assistant("d")]
    assert engine.compress(messages) is messages
    assert engine.last_compression_report["status"] == "nothing_to_compress"


def test_a_system_message_with_null_content_does_not_crash() -> None:
    engine = make_engine(64_000)
    messages = [{"role": "system", "content": None}] + work_history(40)[1:]
    out = engine.compress(messages, force=True)
    assert out[0]["role"] == "system"


def test_compress_never_mutates_and_copies_only_what_changes() -> None:
    engine = make_engine(64_000)
    messages = work_history(40)
    before = snapshot(messages)
    out = engine.compress(messages, force=True)
    assert snapshot(messages) == before
    originals = {id(m) for m in messages}
    assert sum(1 for m in out if id(m) in originals) >= 5  # untouched tail messages are shared


def test_report_fields() -> None:
    engine = make_engine(64_000)
    messages = work_history(40)
    out = engine.compress(messages, focus_topic="mod_3", force=True)
    report = engine.last_compression_report
    assert report["status"] == "compressed"
    assert report["before"] == {"messages": len(messages), "tokens": estimate_messages_tokens(messages)}
    assert report["after"] == {"messages": len(out), "tokens": estimate_messages_tokens(out)}
    assert set(report["phases"]) == {"deduplicated", "demoted", "arguments_shortened", "media_stripped",
                                     "summarized_messages", "demoted_in_summary"}
    assert report["phases"]["summarized_messages"] > 0
    # ``demoted``: the one-liners the returned messages hold; ``demoted_in_summary``: the old
    # results of the condensed part (the summary read them, no one-liner of theirs is kept).
    one_liners = [m for m in out if m.get("role") == "tool" and m["content"].startswith("[read_file] read ")]
    assert report["phases"]["demoted"] == len(one_liners) > 0
    condensed = [m for m in messages[:-1] if m.get("role") == "tool" and m not in out]
    assert report["phases"]["demoted_in_summary"] == len(condensed) - len(one_liners) > 0
    assert report["summary"]["provider"] == "extractive" and report["summary"]["fallback"] is False
    assert out[report["summary"]["index"]][SUMMARY_KEY]
    assert report["summary"]["chars"] > 0 and report["savings_percent"] > 10
    assert report["focus_topic"] == "mod_3" and report["forced"] is True
    assert not report["aborted"] and report["warnings"] == []


def test_report_times_each_phase_that_ran() -> None:
    engine = make_engine(64_000)
    engine.compress(work_history(40), force=True)
    timings = engine.last_compression_report["timings_ms"]
    assert set(timings) == {"free_passes", "boundaries", "summary", "assemble"}
    assert all(isinstance(ms, float) and ms >= 0 for ms in timings.values())
    assert sum(timings.values()) <= engine.last_compression_report["elapsed_ms"] + 1
    engine = make_engine(64_000)
    engine.compress(work_history(40)[:3], force=True)  # nothing to do: no phase ran
    assert engine.last_compression_report["timings_ms"] == {}


def test_session_adds_the_archive_phase_to_the_timings(tmp_path: Any) -> None:
    from hermes_core import Session

    session = Session.open(cwd=tmp_path, home=tmp_path, model="m", context_length=64_000, persist=False)
    result = session.compress(work_history(40), force=True)
    assert result.messages is not None
    timings = session.engine.last_compression_report["timings_ms"]
    assert {"free_passes", "summary", "archive"} <= set(timings)


def test_after_a_compression_the_engine_awaits_real_usage() -> None:
    engine = make_engine(64_000)
    engine.compress(work_history(40), force=True)
    assert engine.compression_count == 1
    assert engine.last_prompt_tokens == -1 and engine.get_status()["last_prompt_tokens"] == 0
    assert engine.awaiting_real_usage_after_compression
    assert engine.last_compression_rough_tokens == engine.last_compression_report["after"]["tokens"]


def test_defer_preflight_to_real_usage() -> None:
    engine = make_engine(200_000)  # threshold 100,000
    assert engine.should_defer_preflight_to_real_usage(50_000) is False
    assert engine.should_defer_preflight_to_real_usage(120_000) is False  # no real usage yet
    engine.compress(work_history(40), force=True)
    assert engine.should_defer_preflight_to_real_usage(120_000) is True  # defer exactly one turn
    engine.update_from_response({"prompt_tokens": 60_000})
    engine.last_compression_rough_tokens = 100_500
    engine.last_rough_tokens_when_real_prompt_fit = 100_500
    assert engine.should_defer_preflight_to_real_usage(104_000) is True  # growth within 5%
    assert engine.should_defer_preflight_to_real_usage(120_000) is False  # grew too much
    engine.update_from_response({"prompt_tokens": 110_000})
    assert engine.should_defer_preflight_to_real_usage(104_000) is False  # real usage says it does not fit


# --- anti-thrash ------------------------------------------------------------------------------


def grown(history: list[dict[str, Any]], turns: int = 2) -> list[dict[str, Any]]:
    return history + [m for i in range(turns) for m in (user(f"more {i}"), assistant(f"ok {i}"))]


def test_two_ineffective_compressions_block_and_growth_lifts_the_block() -> None:
    engine = make_engine(64_000)
    threshold = engine.threshold_tokens
    messages = engine.compress(work_history(40), force=True)
    for _ in range(2):
        messages = engine.compress(grown(messages), current_tokens=threshold)
        assert engine.last_compression_report["status"] in ("ineffective", "nothing_to_compress")
    assert engine.ineffective_compression_count >= 2
    assert engine.should_compress_info(threshold) == (False, "ineffective")
    assert engine.get_status()["blocked_reason"] == "ineffective"
    margin = int(0.25 * threshold)
    assert engine.should_compress_info(threshold + margin - 1) == (False, "ineffective")
    assert engine.should_compress_info(threshold + margin) == (True, None)
    assert engine.ineffective_compression_count == 0


def test_a_forced_compression_always_runs_and_clears_the_block() -> None:
    engine = make_engine(64_000)
    engine._guard.record_verdict(1.0, 60_000)
    engine._guard.record_verdict(1.0, 60_000)
    assert engine.should_compress_info(60_000) == (False, "ineffective")
    out = engine.compress(work_history(40), force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert any(m.get(SUMMARY_KEY) for m in out)
    assert engine.should_compress_info(engine.threshold_tokens) == (True, None)


def test_real_usage_overturns_an_estimated_success() -> None:
    engine = make_engine(64_000)
    for _ in range(2):
        engine.compress(work_history(40), current_tokens=60_000)  # automatic
        assert engine.last_compression_report["status"] == "compressed"
        engine.update_from_response({"prompt_tokens": 58_000})  # barely smaller in reality
    assert engine.should_compress_info(58_000) == (False, "ineffective")
    engine.update_from_response({"prompt_tokens": 20_000})  # under the threshold: block gone
    assert engine.ineffective_compression_count == 0


def test_nothing_to_compress_counts_as_ineffective_only_when_automatic() -> None:
    engine = make_engine(64_000)
    tiny = [system(), user("hi"), assistant("hello")]
    engine.compress(tiny, force=True)
    assert engine.ineffective_compression_count == 0
    engine.compress(tiny)
    engine.compress(tiny)
    assert engine.ineffective_compression_count == 2


def test_cooldown_reason_counts_down_with_the_clock() -> None:
    engine = make_engine(64_000)
    engine.clock = clock = FakeClock()
    engine._guard.start_cooldown("other", clock())
    assert engine.should_compress_info(engine.threshold_tokens) == (False, "cooldown:60")
    clock.advance(45)
    assert engine.should_compress_info(engine.threshold_tokens) == (False, "cooldown:15")
    clock.advance(15)
    assert engine.should_compress_info(engine.threshold_tokens) == (True, None)
    assert engine.should_compress_info(engine.threshold_tokens - 1) == (False, None)


def test_recent_compressions_over_the_thrash_window() -> None:
    engine = make_engine(64_000, data={"compression": {"thrash_window_turns": 5}})
    for _ in range(3):
        engine.compress(work_history(40), force=True)
        engine.update_from_response({"prompt_tokens": 1_000})
    assert engine.recent_compressions() == 3
    assert engine.get_status()["recent_compressions"] == 3
    for _ in range(4):
        engine.update_from_response({"prompt_tokens": 1_000})
    assert engine.recent_compressions() == 0
    assert engine.recent_compressions(window=100) == 3


def test_model_switch_clears_cooldown_and_ineffective_state() -> None:
    engine = make_engine(64_000)
    engine._guard.start_cooldown("timeout", engine.clock())
    engine._guard.record_verdict(0.0, 1)
    engine.update_model("other-model", 128_000)
    assert engine._guard.cooldown_remaining(engine.clock()) == 0
    assert engine.ineffective_compression_count == 0


# --- lifecycle ----------------------------------------------------------------------------------


def test_session_end_and_reset_clear_per_session_state() -> None:
    for finish in ("end", "reset"):
        engine = make_engine(64_000)
        engine.compress(work_history(40), force=True)
        engine._guard.start_cooldown("other", engine.clock())
        if finish == "end":
            engine.on_session_end("s1", [])
        else:
            engine.on_session_reset()
        assert engine.compression_count == 0 and engine._previous_summary is None
        assert engine.get_status()["blocked_reason"] is None
        assert engine.recent_compressions(100) == 0
        assert engine.threshold_tokens > 0  # the model figures stay


def test_a_compression_boundary_keeps_state_but_a_new_session_does_not() -> None:
    engine = make_engine(64_000)
    engine.on_session_start("s1")
    engine.compress(work_history(40), force=True)
    engine.on_session_start("s1", boundary_reason="compression")
    assert engine.compression_count == 1
    engine.on_session_start("s2")
    assert engine.compression_count == 0


def test_has_content_to_compress() -> None:
    engine = make_engine(64_000)
    assert engine.has_content_to_compress([]) is False
    assert engine.has_content_to_compress([system(), user("hi"), assistant("hello")]) is False
    assert engine.has_content_to_compress(work_history(40)) is True
    compressed = engine.compress(work_history(40), force=True)
    only_summary = [compressed[0], summary_of(compressed)] + [user("a"), assistant("b")] * 5
    assert engine.has_content_to_compress(only_summary) is True
    assert engine.has_content_to_compress(compressed[:2] + [user("x")]) is False


def test_repeated_compression_does_not_nest_summaries() -> None:
    engine = make_engine(64_000)
    messages = work_history(40)
    for _ in range(4):
        messages = engine.compress(grown(messages, 30) + [tool("zz", "orphan")], force=True)
        assert sum(1 for m in messages if m.get(SUMMARY_KEY)) == 1
        assert summary_of(messages)["content"].count("[HANDOFF NOTES - BACKGROUND ONLY]") == 1
        assert not any(m.get("tool_call_id") == "zz" for m in messages)


def test_the_latest_user_message_is_kept_verbatim() -> None:
    engine = make_engine(64_000)
    messages = work_history(40)
    messages[-1] = user("please  keep   these   exact   spaces ✓")
    out = engine.compress(messages, force=True)
    assert any(m.get("content") == messages[-1]["content"] or messages[-1]["content"] in str(m.get("content")) for m in out)


def test_a_single_long_agentic_turn_still_compresses() -> None:
    messages = [system(), user("refactor everything under src/")]
    for i in range(60):
        messages += [assistant(f"step {i}", call(f"c{i}", "read_file", path=f"src/f{i}.py")), tool(f"c{i}", f"{i}" * 3_000)]
    # With a protected head the request stays verbatim in it ...
    engine = make_engine(64_000)
    out = engine.compress(messages, force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert out[1] is messages[1]
    # ... without one, the request still stays a live user message (never only a quote), and
    # the summary after it covers the work it started.
    engine = make_engine(64_000, data={"compression": {"protect_first_n": 0}})
    out = engine.compress(messages, force=True)
    assert engine.last_compression_report["status"] == "compressed"
    assert out[1] is messages[1]
    assert summary_of(out) is out[2] and summary_of(out)["role"] == "assistant"


def test_a_summary_that_would_grow_the_conversation_is_refused() -> None:
    class Verbose:
        name = "verbose"

        def __init__(self, config: Any, *, model: Any = None) -> None:
            pass

        def summarize(self, request: Any) -> str:
            return "## Notes\n" + "word " * 200_000

    class Host:
        def summarizers(self) -> dict[str, Any]:
            return {"verbose": Verbose}

    engine = make_engine(1_000_000, data={"compression": {"summary": {"provider": "verbose"}}}, host=Host())
    messages = work_history(40, result_chars=100)
    out = engine.compress(messages, force=True)
    report = engine.last_compression_report
    assert report["refused_would_grow"]
    assert estimate_messages_tokens(out) <= estimate_messages_tokens(messages)
    assert not any(m.get(SUMMARY_KEY) for m in out)


def test_progress_callback_sees_each_phase() -> None:
    engine = make_engine(64_000)
    seen: list[str] = []
    engine.progress = lambda phase, done, total: seen.append(phase)
    engine.compress(work_history(40), force=True)
    assert seen == ["prune", "boundaries", "summary", "assemble"]


@pytest.mark.parametrize("opening", ["[CONTEXT SUMMARY]: ", "[CONTEXT SUMMARY]:\n",
                                     "[CONTEXT COMPACTION - REFERENCE ONLY] earlier turns were compacted\n"])
def test_a_banner_copied_into_the_summarisers_answer_is_stripped(opening: str) -> None:
    class Imitator:
        name = "imitator"

        def __init__(self, config: Any, *, model: Any = None) -> None:
            pass

        def summarize(self, request: Any) -> str:
            return opening + "## Completed actions\n1. ran the tests"

    class Host:
        def summarizers(self) -> dict[str, Any]:
            return {"imitator": Imitator}

    engine = make_engine(64_000, data={"compression": {"summary": {"provider": "imitator"}}}, host=Host())
    out = engine.compress(work_history(40), force=True)
    text = summary_of(out)["content"]
    assert "## Completed actions\n1. ran the tests" in text
    assert "[CONTEXT SUMMARY]" not in text and "[CONTEXT COMPACTION" not in text

"""Counted fit (issue 29): after a compaction the request is counted with the model's tokenizer
(or an estimate with a stated margin) and is within the threshold, or the outcome says
``would_not_fit``; every content shape is seen and trimmed; oversized protected messages
(issue 28); a forced compress of a short history condenses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from hermes_core import Session
from hermes_core.engine import CompressionReport
from hermes_core.errors import ContextOverflowError
from hermes_core.pairing import pairing_problems
from hermes_core.tokens import (
    IMAGE_TOKEN_ESTIMATE,
    RequestCounter,
    counting_method,
    estimate_message_tokens,
)

from hypothesis_budget import examples


def open_session(tmp_path: Path, window: int, model: str = "gpt-4o") -> Session:
    return Session.open(cwd=tmp_path, home=tmp_path, model=model, provider="openai",
                        context_length=window, env={}, persist=False)


def call(ident: str, name: str = "terminal", **args: Any) -> dict[str, Any]:
    return {"id": ident, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def words(seed: int, count: int) -> str:
    """Distinct, code-like text (no two results alike, so nothing dedupes)."""
    return " ".join(f"item_{seed}_{k} = compute({seed * 31 + k}, path='src/m{k % 17}.py')" for k in range(count))


def parts_history(turns: int, parts: int = 4, part_words: int = 60) -> list[dict[str, Any]]:
    """A tool-calling session whose results are lists of text parts (as MCP tools and some
    agents record them): the shape that was never trimmed."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."},
                                      {"role": "user", "content": "Fix the failing build in src/."}]
    for i in range(turns):
        messages.append({"role": "assistant", "content": f"Checking step {i}.",
                         "tool_calls": [call(f"c{i}", command=f"make target_{i}")]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}",
                         "content": [{"type": "text", "text": words(i * 10 + p, part_words)} for p in range(parts)]})
    messages.append({"role": "assistant", "content": "The build passes now."})
    messages.append({"role": "user", "content": "Thanks. Now run the tests."})
    return messages


def test_list_of_parts_results_over_the_window_are_trimmed_and_the_run_fits_when_counted(tmp_path: Path) -> None:
    session = open_session(tmp_path, 32_000)
    messages = parts_history(60)
    counter = RequestCounter("gpt-4o")
    assert counter.count(messages) > 32_000  # the history is well over the window
    out = session.before_request(messages)
    report = session._loop.report()
    assert report.status == "compressed", report.details.get("warnings")
    assert report.tokens_after is not None and report.threshold_tokens == session.engine.threshold_tokens
    assert report.tokens_after <= report.threshold_tokens
    assert report.counted_by == "exact:o200k_base"
    # Counted again independently: the request that goes out fits.
    assert RequestCounter("gpt-4o").count(out, system_prompt=session.system_prompt) == report.tokens_after
    assert pairing_problems(out) == []


def test_a_list_of_parts_result_is_demoted_with_its_media_as_visible_placeholders() -> None:
    from hermes_plugins.compressor.prune import SCREENSHOT_PLACEHOLDER, prune_tool_results

    messages: list[dict[str, Any]] = [{"role": "user", "content": "look"}]
    for i in range(3):
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(f"c{i}", command=f"shot {i}")]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": [
            {"type": "text", "text": words(i, 80)},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": words(i + 100, 80)},
        ]})
    messages.append({"role": "user", "content": "and?"})
    out, stats = prune_tool_results(messages, protect_tail_count=1)
    old = out[2]["content"]
    assert isinstance(old, list) and len(old) == 1 and old[0]["type"] == "text"
    assert SCREENSHOT_PLACEHOLDER in old[0]["text"]
    assert len(old[0]["text"]) < len(words(0, 80))
    assert stats.demoted >= 1 and stats.media_stripped >= 1


def test_list_of_parts_results_with_the_same_text_are_deduplicated() -> None:
    from hermes_plugins.compressor.prune import DUPLICATE_PREFIX, prune_tool_results

    same = [{"type": "text", "text": words(7, 50)}]
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for i in range(2):
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(f"c{i}", command="cat log")]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": list(same)})
    messages += [{"role": "assistant", "content": "same"}, {"role": "user", "content": "ok"}]
    out, stats = prune_tool_results(messages, protect_tail_count=10)
    assert stats.deduplicated == 1
    assert out[2]["content"].startswith(DUPLICATE_PREFIX) and out[4]["content"] == same


def test_an_oversized_protected_tool_result_is_limited(tmp_path: Path) -> None:
    session = open_session(tmp_path, 32_000)
    big = "\n".join(f"line {k}: value {k * 7}" for k in range(250_000))  # ~5 MB
    messages = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Dump the table."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", command="dump")]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
    ]
    out = session.before_request(messages)
    result = out[-1]["content"]
    limit = session.engine.result_limit()
    # (the archive appends a short reference to the full text)
    assert len(result) <= limit + 40 and "characters of output cut here" in result
    assert result.startswith("line 0:") and big[-40:] in result
    kinds = [w.kind for w in session.warnings]
    assert "tool_results_limited" in kinds
    report = session._loop.report()
    assert report.details["phases"]["results_limited"] == 1
    assert report.tokens_after is not None and report.tokens_after <= report.threshold_tokens


def test_a_huge_user_message_is_never_cut_warns_and_overflow_raises(tmp_path: Path) -> None:
    session = open_session(tmp_path, 32_000)
    huge = " ".join(f"word{k}" for k in range(200_000))
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": huge}]
    out = session.before_request(messages)
    assert any(m.get("content") == huge for m in out)  # never cut
    found = [w for w in session.warnings if w.kind == "user_message_too_large"]
    assert len(found) == 1 and "32,000-token context window" in found[0].message
    assert found[0].details["tokens"] > 32_000
    error = RuntimeError("This model's maximum context length is 32000 tokens")
    with pytest.raises(ContextOverflowError, match="never cut"):
        session.on_provider_error(error, out)


def test_what_cannot_fit_is_would_not_fit_never_compressed(tmp_path: Path) -> None:
    session = open_session(tmp_path, 64_000)
    # A user message of ~40k tokens: under the window, over the 32k threshold, never cut.
    big = " ".join(f"w{k}x" for k in range(40_000))
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    for i in range(10):
        messages += [{"role": "user", "content": f"question {i}"}, {"role": "assistant", "content": f"answer {i}"}]
    messages += [{"role": "user", "content": big}]
    session.before_request(messages)
    report = session._loop.report()
    assert report.status == "would_not_fit"
    assert report.tokens_after is not None and report.tokens_after > report.threshold_tokens
    assert any(w.kind == "compression_would_not_fit" for w in session.warnings)


@pytest.mark.parametrize("step", ["before_request", "after_response"])
def test_a_near_threshold_estimate_is_counted_and_compresses_when_the_count_is_over(tmp_path: Path, step: str) -> None:
    session = open_session(tmp_path, 64_000)
    threshold = session.engine.threshold_tokens
    # Chinese text: ~1 char a token, so chars/4 says about a quarter of the count.
    text = "上下文工程压缩测试" * 40
    messages: list[dict[str, Any]] = [{"role": "system", "content": "s"}]
    i = 0
    while session._loop.rough(messages, None, keep=False) < threshold * 0.9:
        messages += [{"role": "user", "content": f"{i} {text}"}, {"role": "assistant", "content": f"{i} {text}"}]
        i += 1
    assert session._loop.rough(messages, None, keep=False) < threshold
    # (after_response with no usage reported judges the estimate, as the preflight does)
    out = session.before_request(messages) if step == "before_request" else \
        session.after_response({"prompt_tokens": 0}, messages)
    assert out is not messages and len(out) < len(messages)
    report = session._loop.report()
    assert report.tokens_after is not None


def test_the_steady_turn_far_from_the_threshold_does_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    session = open_session(tmp_path, 200_000)
    counted: list[int] = []
    original = RequestCounter.count

    def spy(self: RequestCounter, *args: Any, **kwargs: Any) -> int:
        counted.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(RequestCounter, "count", spy)
    session.before_request([{"role": "user", "content": "hello"}])
    assert counted == []


FORCED_SHAPE = [
    {"role": "system", "content": "You are a coding agent."},
    {"role": "user", "content": "Set up the project and tell me what is in it."},
    {"role": "assistant", "content": "It is a small Flask app with a tests folder."},
    {"role": "user", "content": "Run the tests please."},
    {"role": "assistant", "content": "", "tool_calls": [call("c1", command="pytest -q")]},
    {"role": "tool", "tool_call_id": "c1", "content": "3 passed in 0.4s"},
    {"role": "assistant", "content": "All three tests pass."},
    {"role": "user", "content": "Great, add a test for the login route."},
    {"role": "assistant", "content": "Added tests/test_login.py."},
]


def test_a_forced_compress_of_nine_messages_condenses_the_middle(tmp_path: Path) -> None:
    session = open_session(tmp_path, 64_000)
    result = session.compress(list(FORCED_SHAPE))
    out = result.messages
    assert not result.feedback.headline.startswith(("Nothing", "Compression refused")), result.feedback.text
    assert len(out) < len(FORCED_SHAPE)
    assert any(m.get("_compressed_summary") for m in out)
    assert out[1:4] == FORCED_SHAPE[1:4]  # the protected head, ending on a user message
    assert out[0]["content"].startswith(FORCED_SHAPE[0]["content"])  # (+ the compaction note)
    # What lay between the head and the tail is condensed: the call and its result are gone.
    assert not any(m.get("tool_calls") or m["role"] == "tool" for m in out)
    assert out[-1] == FORCED_SHAPE[-1]
    roles = [m["role"] for m in out]
    assert not any(a == b == "user" for a, b in zip(roles, roles[1:])), roles
    assert pairing_problems(out) == []
    report = session._loop.report()
    assert report.tokens_after is not None and report.fits


def test_every_content_shape_counts_in_the_estimate() -> None:
    text = "x" * 4_000
    assert estimate_message_tokens({"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": text}]}) >= 1_000
    nested = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                           "content": [{"type": "text", "text": text}]}]}
    assert estimate_message_tokens(nested) >= 1_000
    thinking = {"role": "assistant", "content": [{"type": "thinking", "thinking": text, "signature": "s" * 400}]}
    assert estimate_message_tokens(thinking) >= 1_100
    kept = {"role": "assistant", "content": "ok", "tool_calls": [], "_anthropic_blocks": [
        {"type": "thinking", "thinking": text, "signature": "sig"}]}
    assert estimate_message_tokens(kept) >= 1_000
    image = {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "data": "A" * 100_000}}]}
    assert IMAGE_TOKEN_ESTIMATE <= estimate_message_tokens(image) < IMAGE_TOKEN_ESTIMATE + 50
    flags = {"role": "tool", "tool_call_id": "a", "content": "hi", "_is_error": True, "_injected": True,
             "_reasoning": "our own note, never sent " * 50}
    assert estimate_message_tokens(flags) == estimate_message_tokens({"role": "tool", "tool_call_id": "a", "content": "hi"})


def test_a_deep_payload_is_sized_without_recursion() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = [deep]
    message = {"role": "assistant", "content": "x", "tool_calls": [], "_responses_items": deep}
    assert estimate_message_tokens(message) > 0
    assert RequestCounter("gpt-4o").count([message]) > 0


def test_counting_methods_are_named_with_their_margin() -> None:
    assert counting_method("gpt-4-0613") == ("exact:cl100k_base", 0.0)
    assert counting_method("openai/gpt-5-mini") == ("exact:o200k_base", 0.0)
    assert counting_method("claude-opus-4-1")[0] == "estimate:cl100k_base"
    assert counting_method("claude-opus-4-1")[1] > 0
    assert CompressionReport.coerce({"fit": {"tokens_after": 10, "threshold_tokens": 9,
                                             "counted_by": "exact:cl100k_base"}}).fits is False


# --- the property: never `compressed` over the threshold --------------------------------------


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "agent"},
                                      {"role": "user", "content": "start the task"}]
    for i in range(draw(st.integers(4, 40))):
        shape = draw(st.sampled_from(["str", "parts", "image", "text"]))
        size = draw(st.integers(10, 400))
        if shape == "text":
            messages += [{"role": "user", "content": f"ask {i} " + words(i, size // 10 + 1)},
                         {"role": "assistant", "content": f"reply {i} " + words(i + 500, size // 10 + 1)}]
            continue
        messages.append({"role": "assistant", "content": "", "tool_calls": [call(f"c{i}", command=f"run {i}")]})
        if shape == "str":
            content: Any = words(i, size)
        elif shape == "parts":
            content = [{"type": "text", "text": words(i * 7 + p, size // 3 + 1)} for p in range(3)]
        else:
            content = [{"type": "text", "text": words(i, size)},
                       {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": content})
    messages += [{"role": "assistant", "content": "done so far"}, {"role": "user", "content": "continue"}]
    return messages


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(messages=histories(), window=st.sampled_from([8_000, 16_000, 32_000, 64_000]),
       model=st.sampled_from(["gpt-4o", "gpt-4", "claude-sonnet-4"]))
def test_after_any_compaction_the_count_is_within_the_threshold_or_would_not_fit(
    tmp_path_factory: pytest.TempPathFactory, messages: list[dict[str, Any]], window: int, model: str,
) -> None:
    tmp = tmp_path_factory.mktemp("fit")
    session = open_session(tmp, window, model=model)
    out = session.before_request(messages)
    if out is messages:
        event("under the threshold")
        return
    report = session._loop.report()
    event(f"compacted: {report.status}")
    assert report.tokens_after is not None
    recount = RequestCounter(model).count(out, system_prompt=session.system_prompt)
    assert recount == report.tokens_after
    if report.status != "would_not_fit":
        assert recount <= session.engine.threshold_tokens, report.status
    assert pairing_problems(out) == []


def test_a_manual_compress_limits_an_oversized_result_in_a_fully_protected_history(tmp_path: Path) -> None:
    session = open_session(tmp_path, 64_000)
    big = "row,value\n" + "\n".join(f"{k},{k * 3}" for k in range(100_000))
    messages = [
        {"role": "user", "content": "Export the table."},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", command="export")]},
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "assistant", "content": "Exported."},
    ]
    result = session.compress(messages)
    assert not result.feedback.headline.startswith("Nothing"), result.feedback.text
    assert len(result.messages[2]["content"]) < session.engine.result_limit() + 40
    assert result.messages[0] == messages[0] and result.messages[3]["content"].startswith("Exported.")


def test_the_cli_report_counts_the_result_and_says_when_it_does_not_fit(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from hermes_core.cli import cli

    def run(path: Path) -> Any:
        return CliRunner().invoke(cli, ["compress", str(path), "--context-length", "64000", "--model", "gpt-4o",
                                        "--json"], catch_exceptions=False)

    fits = tmp_path / "fits.json"
    fits.write_text(json.dumps(parts_history(60)), encoding="utf-8")
    result = run(fits)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["fit"]["fits"] is True and report["fit"]["tokens_after"] <= report["fit"]["threshold_tokens"]
    assert report["fit"]["counted_by"] == "exact:o200k_base"

    big = " ".join(f"w{k}x" for k in range(45_000))  # one user message over the threshold
    too_big = tmp_path / "big.json"
    too_big.write_text(json.dumps([*parts_history(10), {"role": "user", "content": big}]), encoding="utf-8")
    result = run(too_big)
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["status"] == "would_not_fit" and report["fit"]["fits"] is False
    assert any("never cut" in w for w in report["warnings"])


def test_the_spill_pipeline_sees_responses_text_parts(tmp_path: Path) -> None:
    from hermes_core.records import ToolCallContext
    from hermes_plugins.tools.spill import process_tool_result

    parts = [{"type": "output_text", "text": "d" * 150_000}]
    out = process_tool_result(parts, ToolCallContext(tool_name="web_extract", tool_call_id="r1", home=tmp_path))
    assert out[0]["text"].startswith("<persisted-output>")


def test_a_read_file_page_as_a_list_of_parts_is_held_to_the_page_limits(tmp_path: Path) -> None:
    from hermes_core.records import ToolCallContext
    from hermes_plugins.tools.spill import process_tool_result

    lines = "\n".join(f"line {k}" for k in range(5_000))
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    out = process_tool_result([{"type": "text", "text": lines}, image],
                              ToolCallContext(tool_name="read_file", tool_call_id="p1", home=tmp_path))
    assert out[1] is image
    assert out[0]["text"].count("\n") <= 2_001 and "read on with read_file offset=2001" in out[0]["text"]
    small = [{"type": "text", "text": "short page"}]
    assert process_tool_result(small, ToolCallContext(tool_name="read_file", tool_call_id="p2", home=tmp_path)) is small


def test_over_the_threshold_after_compress_the_further_passes_run_and_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = open_session(tmp_path, 32_000)
    engine = session.engine
    messages = parts_history(40)
    calls: list[int] = []
    real_fit_to, real_compress = engine.fit_to, engine.compress

    def lazy_compress(messages: list[dict[str, Any]], *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
        if calls:  # inside the further passes: compress for real
            return real_compress(messages, *args, **kwargs)
        # Every run of the loop changes something but leaves the request far over the threshold.
        engine.last_compression_report = {"status": "compressed", "before": {"messages": len(messages)},
                                          "after": {"messages": len(messages) - 1}, "warnings": []}
        return messages[:1] + messages[2:]

    def spy_fit_to(messages: list[dict[str, Any]], target: int) -> list[dict[str, Any]]:
        calls.append(target)
        return real_fit_to(messages, target)

    monkeypatch.setattr(engine, "compress", lazy_compress)
    monkeypatch.setattr(engine, "fit_to", spy_fit_to)
    out = session.before_request(messages)
    report = session._loop.report()
    assert calls and 0 < calls[0] < session.engine.threshold_tokens
    assert report.details["fit"]["fit_rounds"] >= 1
    assert report.fits and report.status != "would_not_fit"
    assert RequestCounter("gpt-4o").count(out, system_prompt=session.system_prompt) <= report.threshold_tokens


def test_the_engines_further_passes_limit_results_then_the_tail() -> None:
    from hermes_core.tokens import estimate_messages_tokens
    from hermes_plugins.compressor.engine import CompressorEngine

    engine = CompressorEngine()
    engine.update_model("gpt-4o", 64_000)
    messages = parts_history(30, parts=2, part_words=200)
    before = estimate_messages_tokens(messages)
    count = engine.compression_count
    out = engine.fit_to(messages, before // 4)
    assert out is not messages and estimate_messages_tokens(out) <= before // 4
    assert pairing_problems(out) == []
    assert engine.compression_count == count  # part of the same compaction for the guard
    assert out[-1] == messages[-1]


def test_a_manual_compress_that_cannot_fit_says_so_in_its_feedback(tmp_path: Path) -> None:
    session = open_session(tmp_path, 64_000)
    big = " ".join(f"w{k}x" for k in range(45_000))
    messages = [*parts_history(10), {"role": "user", "content": big}]
    result = session.compress(messages)
    assert session._loop.report().status == "would_not_fit"
    assert result.feedback.note is not None and "does not fit" in result.feedback.note
    assert any(m.get("content") == big for m in result.messages)  # never cut


def _short_history(shape: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    for n, kind in enumerate(shape):
        if kind == "u":
            messages.append({"role": "user", "content": f"request {n}: please change module {n}"})
        elif kind == "a":
            messages.append({"role": "assistant", "content": f"reply {n}: changed module {n}"})
        else:
            messages.append({"role": "assistant", "content": "", "tool_calls": [call(f"c{n}", command=f"ls {n}")]})
            messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"out {n}"})
    return messages[:9]


def _touching_users(messages: list[dict[str, Any]]) -> int:
    roles = [m["role"] for m in messages]
    return sum(1 for a, b in zip(roles, roles[1:]) if a == b == "user")


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=st.text(alphabet="uaT", min_size=8, max_size=8))
def test_a_forced_compress_of_a_short_history_never_makes_two_user_messages_touch(
    tmp_path_factory: pytest.TempPathFactory, shape: str,
) -> None:
    session = open_session(tmp_path_factory.mktemp("short"), 64_000)
    messages = _short_history(shape)
    out = session.compress(messages).messages
    assert _touching_users(out) <= _touching_users(messages)
    assert pairing_problems(out) == []


def test_the_kept_request_opens_the_tail_when_the_head_ends_on_a_user_message(tmp_path: Path) -> None:
    session = open_session(tmp_path, 64_000)
    messages = _short_history("uauauaaa")  # head ends on request 2; request 4 is the newest
    out = session.compress(messages).messages
    assert _touching_users(out) == 0
    assert [m["content"] for m in out if m["role"] == "user"] == [
        m["content"] for m in messages if m["role"] == "user"]  # every request kept whole

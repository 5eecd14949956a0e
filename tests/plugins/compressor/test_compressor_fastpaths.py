"""The free passes' fast paths give exactly what their plain forms give.

Phase 1 runs over whole histories, so its hot path is written for speed: one forward pass that
groups duplicates by (length, sample) buckets, demotes results as it meets them, checks long
arguments while looking up calls, and writes into a copy of the list; the one-line summaries
skip wrapper layers and match the exit-code pattern with one regex call. Each of these is
compared here with a plain, obviously-correct form over generated inputs.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_core.pairing import match_results, pending_calls, repair_pairing
from hermes_plugins._common import failures
from hermes_plugins.compressor import oneliners, plan, prune
from hermes_plugins.compressor.oneliners import (
    exit_code_of,
    looks_demoted,
    summarize_tool_result,
    tool_line,
)
from hermes_plugins.compressor.plan import PruneStats
from hermes_plugins.compressor.prune import (
    IMAGE_PART_TYPES,
    LONG_ARGUMENTS_CHARS,
    MIN_PRUNE_CHARS,
    SCREENSHOT_PLACEHOLDER,
    duplicate_note,
    prune_tool_results,
    shorten_arguments,
)

from compressor_support import assistant, call, tool, user
from hypothesis_budget import examples

# --- plain forms ------------------------------------------------------------------------

_EXIT_CODE = re.compile(r"""["']?exit[_ ]?code["']?\s*[:=]\s*(-?\d+)""", re.IGNORECASE)


def plain_exit_code(content: str) -> str:
    """The exit-code search with the whole pattern tried before the word and at it."""
    tail_start = max(0, len(content) - 400)
    for word in ("exit", "Exit", "EXIT"):
        at = content.rfind(word, tail_start)
        while at != -1:
            match = _EXIT_CODE.match(content, max(0, at - 1)) or _EXIT_CODE.match(content, at)
            if match:
                return match.group(1)
            at = content.rfind(word, tail_start, at)
    if tail_start:
        for word in ("exit", "Exit", "EXIT"):
            at = content.find(word, 0, tail_start + 4)
            while at != -1:
                match = _EXIT_CODE.match(content, max(0, at - 1)) or _EXIT_CODE.match(content, at)
                if match:
                    return match.group(1)
                at = content.find(word, at + 4, tail_start + 4)
    return "?"


def plain_clip(text: str, limit: int, keep: int | None = None) -> str:
    text = " ".join(text.split()) if ("\n" in text or "  " in text) else text
    if len(text) <= limit:
        return text
    return text[: keep if keep is not None else limit - 3] + "..."


def plain_lines(content: str) -> str:
    if not content or content.isspace():
        return "0"
    size = len(content)
    if size <= oneliners.EXACT_LINES_MAX:
        return f"{content.count(chr(10)) + 1:,}"
    sample = oneliners.LINE_SAMPLE
    sampled = content.count("\n", 0, sample) + content.count("\n", size - sample)
    return f"~{round(sampled * size / (2 * sample)) + 1:,}"


def plain_prune(
    messages: list[dict[str, Any]], protect_tail_count: int, min_prune_chars: int = MIN_PRUNE_CHARS
) -> tuple[list[dict[str, Any]], PruneStats]:
    """Phase 1 without the tail-pressure pass, written the slow and simple way."""
    stats = PruneStats()
    out = list(messages)
    boundary = max(0, len(messages) - protect_tail_count)
    older = _plain_dedupe(messages, out, stats)
    # The pairing rule decides which call a result answers; calls in flight stay untouched.
    answers = match_results(messages)[0]

    def call_for(i: int) -> tuple[Any, Any]:
        if i not in answers:
            return ("unknown", None)
        a, p = answers[i]
        c = messages[a]["tool_calls"][p]
        if type(c) is not dict or type(c.get("function")) is not dict:
            return ("unknown", None)
        return (c["function"].get("name") or "unknown", c["function"].get("arguments"))

    pending = pending_calls(messages)
    if pending:
        boundary = min(boundary, pending[0][0])
    for i in range(boundary):
        m = messages[i]
        if m.get("role") == "tool" and i not in older:
            out[i] = _plain_result(m, call_for(i), min_prune_chars, stats)
        elif m.get("role") == "assistant" and m.get("tool_calls"):
            out[i] = _plain_arguments(m, stats)
    if stats.changed == 0:
        return messages, stats
    return out, stats


def _plain_dedupe(messages: list[dict[str, Any]], out: list[dict[str, Any]], stats: PruneStats) -> set[int]:
    """Older copies of a result become back-references; returns their indices."""
    copies: dict[str, list[int]] = {}
    for i, m in enumerate(messages):
        content = m.get("content")
        if m.get("role") == "tool" and type(content) is str and len(content) >= MIN_PRUNE_CHARS:
            copies.setdefault(content, []).append(i)
    older: set[int] = set()
    for where in copies.values():
        note = duplicate_note(str(messages[where[-1]].get("tool_call_id") or ""))
        for i in where[:-1]:
            out[i] = {**messages[i], "content": note}
            older.add(i)
        stats.deduplicated += len(where) - 1
    return older


def _plain_result(m: dict[str, Any], call: tuple[Any, Any], min_prune_chars: int, stats: PruneStats) -> dict[str, Any]:
    """An old result demoted to its one-liner, or its screenshots replaced."""
    content = m.get("content")
    if type(content) is str:
        if len(content) > min_prune_chars and not looks_demoted(content):
            line = summarize_tool_result(*call, content)
            if len(line) < len(content):
                stats.demoted += 1
                return {**m, "content": line}
    elif isinstance(content, list):
        images = [isinstance(p, dict) and p.get("type") in IMAGE_PART_TYPES for p in content]
        if any(images):
            stats.media_stripped += sum(images)
            return {**m, "content": [{"type": "text", "text": SCREENSHOT_PLACEHOLDER} if image else p
                                     for p, image in zip(content, images, strict=True)]}
    elif isinstance(content, dict) and content.get("_multimodal"):
        summary = content.get("text_summary")
        text = summary[:200] if isinstance(summary, str) and summary else SCREENSHOT_PLACEHOLDER
        stats.media_stripped += 1
        return {**m, "content": "[screenshot removed] " + text}
    return m


def _plain_arguments(m: dict[str, Any], stats: PruneStats) -> dict[str, Any]:
    """An old assistant message with its long arguments shortened."""
    calls = list(m["tool_calls"])
    for j, c in enumerate(calls):
        fn = c.get("function") if type(c) is dict else None
        arguments = fn.get("arguments") if type(fn) is dict else None
        if type(arguments) is str and len(arguments) > LONG_ARGUMENTS_CHARS:
            shorter = shorten_arguments(arguments)
            if shorter is not None and len(shorter) < len(arguments):
                calls[j] = {**c, "function": {**fn, "arguments": shorter}}
                stats.arguments_shortened += 1
    return {**m, "tool_calls": calls} if calls != m["tool_calls"] else m


# --- generated inputs ---------------------------------------------------------------------

TOOLS = ["terminal", "read_file", "write_file", "search_files", "patch", "web_search", "web_extract",
         "delegate_task", "execute_code", "skill_view", "vision_analyze", "memory", "todo", "process",
         "cronjob", "browser_click", "browser_navigate", "acme_lookup", "", None, 7]
argument_values = st.one_of(
    st.sampled_from(["src/app.py", "npm test", "a\nb  c", "https://x.example/p", "日本語", ""]),
    st.text(max_size=12),
    st.integers(-5, 10**6),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.sampled_from(["u1", "u2"]), max_size=3),
    st.builds(lambda n: "L" * n, st.sampled_from([150, 250, 700])),
)
argument_keys = st.sampled_from(["path", "file_path", "command", "query", "pattern", "offset", "content",
                                 "url", "urls", "goal", "code", "name", "question", "action", "target",
                                 "ref", "session_id", "mode", "extra"])
argument_dicts = st.dictionaries(argument_keys, argument_values, max_size=5)
arguments = st.one_of(
    argument_dicts.map(json.dumps),
    argument_dicts.map(lambda d: json.dumps(d, ensure_ascii=False, indent=2)),
    argument_dicts,
    st.sampled_from(["", "{broken", '{"path": NaN}', "[1, 2]", '"text"', "null", '{"path": "a\\ud800"}']),
    st.builds(lambda n: json.dumps({"content": "y" * n, "path": "p.py"}), st.integers(100, 900)),
    st.builds(lambda n: "{" + "x" * n, st.sampled_from([10, 600])),
    st.none(),
)
exit_tokens = st.sampled_from([
    "exit", "Exit", "EXIT", "eXiT", "exit_code", "ExitCode", "exit code", "EXIT_CODE", "code", "CODE",
    '"', "'", ":", "=", " ", "\t", "\n", "-", "0", "1", "42", "-3", "\u0663", "x", "xit", "e", "{", ",",
    "\u00a0", "output ",
])


@st.composite
def exit_texts(draw: Any) -> str:
    core = "".join(draw(st.lists(exit_tokens, max_size=40)))
    pad = "filler " * draw(st.integers(0, 120))
    return pad + core if draw(st.booleans()) else core + pad


def lookalike(tag: int, where: int, length: int = 400) -> str:
    """A result of ``length`` chars that differs from its siblings only around ``where``."""
    text = f"{tag:04d}"
    return ("z" * where + text + "z" * length)[:length]


BODIES = [
    *(lookalike(t, 0) for t in range(6)),       # same length, same sample: a crowded bucket
    *(lookalike(t, 40) for t in range(6)),      # same length, different samples
    *(lookalike(t, 380) for t in range(3)),     # same bucket, different near the end
    "short output",
    "o" * 200, "p" * 201,
    "line of output\n" * 40,
    json.dumps({"output": "ran the tests\n" * 30, "exit_code": 1}),
    "[terminal] ran `make` -> exit 0, 3 lines output",
    "[duplicate tool output: identical to the later result of call c1; see there]" + " " * 200,
    "汉字输出\n" * 80,
]
contents = st.one_of(
    st.sampled_from(BODIES),
    st.text(min_size=150, max_size=600),
    exit_texts(),
    st.just([{"type": "text", "text": "shot"}, {"type": "image_url", "image_url": {"url": "data:x"}}]),
    st.just({"_multimodal": True, "text_summary": "a page"}),
    st.sampled_from([None, 12345, []]),
)


@st.composite
def histories(draw: Any) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
    ids = [f"c{k}" for k in range(12)] + ["", None]
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["user", "reply", "calls", "calls", "calls"]))
        if kind == "user":
            messages.append(user("go on"))
        elif kind == "reply":
            messages.append(assistant("done " * draw(st.integers(0, 5))))
        else:
            calls: list[Any] = []
            for _ in range(draw(st.integers(1, 3))):
                shape = draw(st.sampled_from(["ok", "ok", "ok", "call_id", "no_fn", "not_dict"]))
                ident = draw(st.sampled_from(ids))
                fn = {"name": draw(st.sampled_from(TOOLS)), "arguments": draw(arguments)}
                if shape == "ok":
                    calls.append({"id": ident, "type": "function", "function": fn})
                elif shape == "call_id":
                    calls.append({"call_id": ident, "function": fn})
                elif shape == "no_fn":
                    calls.append({"id": ident, "function": "nope"})
                else:
                    calls.append("nope")
            messages.append({"role": "assistant", "content": "", "tool_calls": calls})
            answered = draw(st.permutations(range(len(calls))))[: draw(st.integers(0, len(calls)))]
            for k in answered:
                c = calls[k]
                ident = c.get("id", c.get("call_id")) if isinstance(c, dict) else None
                if draw(st.integers(0, 9)) == 0:
                    ident = draw(st.sampled_from(ids))  # answers a call elsewhere (or none)
                messages.append(tool(ident, draw(contents)))
    return messages


# --- tests --------------------------------------------------------------------------------


@settings(max_examples=examples(150), deadline=None)
@given(histories(), st.integers(0, 6), st.sampled_from([MIN_PRUNE_CHARS, 0, 50, 1_000]))
def test_the_single_pass_gives_what_the_plain_passes_give(
    messages: list[dict[str, Any]], protect: int, min_chars: int
) -> None:
    # The engine hands the free passes a list valid by the pairing rule (it repairs first).
    messages = repair_pairing(messages)[0]
    before = json.dumps(messages, sort_keys=True, default=repr)
    out, stats = prune_tool_results(messages, protect_tail_count=protect, min_prune_chars=min_chars)
    expected, expected_stats = plain_prune(messages, protect, min_chars)
    assert json.dumps(messages, sort_keys=True, default=repr) == before  # the input is untouched
    assert (out is messages) == (expected is messages)
    assert out == expected
    # Unchanged messages are the input's own objects; changed ones are new.
    assert [a is m for a, m in zip(out, messages, strict=True)] == [
        e is m for e, m in zip(expected, messages, strict=True)
    ]
    assert stats == expected_stats


@settings(max_examples=examples(150), deadline=None)
@given(exit_texts())
def test_exit_code_matches_the_whole_pattern_tried_twice(content: str) -> None:
    assert exit_code_of(content) == plain_exit_code(content)


def test_exit_code_cases_the_single_match_must_keep() -> None:
    cases = {
        '{"output": "x", "exit_code": 3}': "3",
        "... Exit code: -1\n": "-1",
        "EXIT_CODE=7": "7",
        "exit code = \u0663": "\u0663",  # \d is any Unicode digit, as before
        "'exit code': 5 and exit_code: 6": "6",  # the last one near the end wins
        "exitcode: 2": "2",
        "exit: 2": "?",
        "x" * 500 + "Exit code 4": "?",  # needs ':' or '='
        "exit_code: 9 " + "filler " * 100: "9",  # found by the scan before the last 400 chars
        "Exit code: 1 " + "EXIT CODE: 2 " + "filler " * 100: "1",  # "Exit" before "EXIT"
        "EXIT CODE: 2 " + "exit code: 1 " + "filler " * 100: "1",  # "exit" first, wherever it is
    }
    for content, code in cases.items():
        assert exit_code_of(content) == plain_exit_code(content) == code, content


@st.composite
def outputs(draw: Any) -> str:
    """Outputs around the exact-count limit and the sample windows, newlines anywhere or nowhere."""
    size = draw(st.sampled_from([0, 1, 7, 300, 4_095, 4_096, 4_097, 16_383, 16_384, 16_385, 16_386, 30_000]))
    chars = [draw(st.sampled_from(["a", " ", "\u6c49"]))] * size
    sample = oneliners.LINE_SAMPLE
    spots = [0, size - 1, sample - 1, sample, size - sample, size - sample - 1, size // 2]
    for at in draw(st.lists(st.sampled_from(spots) | st.integers(0, max(0, size - 1)), max_size=6)):
        if 0 <= at < size:
            chars[at] = "\n"
    return "".join(chars)


@settings(max_examples=examples(150), deadline=None)
@given(outputs())
def test_line_counts_skip_the_count_only_when_there_is_no_newline(content: str) -> None:
    assert oneliners._lines(content) == plain_lines(content)


@settings(max_examples=examples(150), deadline=None)
@given(st.sampled_from(TOOLS[:-3] + ["weird_tool", 0.5]), arguments, st.one_of(exit_texts(), st.sampled_from(BODIES)))
def test_tool_line_is_summarize_tool_result(name: Any, args: Any, content: str) -> None:
    assert tool_line(name, args, content) == summarize_tool_result(name, args, content)


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet=" \n\tab", max_size=90), st.sampled_from([40, 60, 80, 120]), st.sampled_from([None, 57, 77]))
def test_clip_fast_path(text: str, limit: int, keep: int | None) -> None:
    assert oneliners._clip(text, limit, keep) == plain_clip(text, limit, keep)


def test_lines_for_non_string_arguments_are_str_of_them() -> None:
    """The formatters inline ``str`` for non-string argument values (JSON numbers, lists...)."""
    content = "r" * 1_500
    cases = [
        ("read_file", {"path": 5, "offset": 2.5}, "[read_file] read 5 from line 2.5 (1,500 chars)"),
        ("patch", {"mode": ["a"], "path": True}, "[patch] ['a'] in True (1,500 chars result)"),
        ("search_files", {"target": 1, "pattern": 2, "path": 3}, "[search_files] 1 search for '2' in 3 -> ? matches"),
        ("web_search", {"query": 10**6}, "[web_search] query='1000000' (1,500 chars result)"),
        ("delegate_task", {"goal": {"a": 1}}, "[delegate_task] '{'a': 1}' (1,500 chars result)"),
        ("execute_code", {"code": 42}, "[execute_code] `42` (1 lines output)"),
        ("terminal", {"command": None}, "[terminal] ran `None` -> exit ?, 1 lines output"),
        ("acme", {"sku": 1.0, "n": [1, 2], "third": "x"}, "[acme] sku=1.0 n=[1, 2] (1,500 chars result)"),
    ]
    for name, args, line in cases:
        assert summarize_tool_result(name, json.dumps(args), content) == line


def test_results_of_one_length_with_different_samples_are_never_hashed(monkeypatch: Any) -> None:
    """Bucketing by a sample keeps the dedupe linear: lookalike lengths cost no digests."""
    hashed: list[int] = []
    real = prune._digest
    monkeypatch.setattr(prune, "_digest", lambda text: hashed.append(len(text)) or real(text))
    bodies = [lookalike(t, 40) for t in range(60)]  # sixty distinct results, all 400 chars
    messages = [user("go")]
    for i, body in enumerate([*bodies, bodies[7], bodies[59]]):
        messages += [assistant("", call(f"c{i}")), tool(f"c{i}", body)]
    out, stats = prune_tool_results(messages, protect_tail_count=100)
    assert stats.deduplicated == 2
    assert not hashed
    assert out[2 + 2 * 7]["content"].startswith("[duplicate") and "of call c60" in out[2 + 2 * 7]["content"]


def test_long_arguments_are_found_whatever_results_follow() -> None:
    """The argument check rides on the call look-ups; calls no result led to are still checked."""
    big = json.dumps({"path": "big.py", "content": "x" * 900})
    result = "output line\n" * 40
    cases = [
        [call("a", "write_file", content="x" * 900)],  # answered, long
        [call("a"), {"id": "b", "type": "function", "function": {"name": "write_file", "arguments": big}}],
    ]
    for calls in cases:
        for answered in ([], ["a"], ["b"], ["b", "a"], ["a", "b"]):
            messages = [user("go"), assistant("", *calls)]
            messages += [tool(ident, result) for ident in answered]
            messages += [user("next"), assistant("ok")]
            before = json.dumps(messages)
            out, stats = prune_tool_results(messages, protect_tail_count=1)
            assert stats.arguments_shortened == 1, answered
            written = next(c for c in out[1]["tool_calls"] if c["function"]["name"] == "write_file")
            assert "...[truncated]" in written["function"]["arguments"]
            json.loads(written["function"]["arguments"])
            assert json.dumps(messages) == before


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(TOOLS[:-3] + ["weird_tool"]), arguments, st.booleans()), min_size=1, max_size=4),
    st.sampled_from(BODIES),
)
def test_remembered_lines_are_the_lines_of_each_call(calls: list[tuple[Any, Any, bool]], body: str) -> None:
    content = body + " " * 300  # long enough for its verdict (and so its line) to be remembered
    failures.clear_cache()
    for _ in range(2):  # the second round is answered from the memo
        for name, args, is_error in calls:
            assert tool_line(name, args, content, is_error) == summarize_tool_result(name, args, content, is_error)


def test_a_remembered_line_goes_with_the_verdict_and_never_outlives_its_inputs() -> None:
    failures.clear_cache()
    content = "Error: boom\n" + "detail line\n" * 40
    first = tool_line("terminal", '{"command": "make"}', content)
    assert failures.remembered_line(content, ("terminal", '{"command": "make"}', False)) == first
    assert tool_line("terminal", '{"command": "make test"}', content) == summarize_tool_result(
        "terminal", '{"command": "make test"}', content)
    failures.clear_cache()
    assert failures.remembered_line(content, ("terminal", '{"command": "make test"}', False)) is None
    args = {"command": "make"}  # a dict may change in place: never remembered
    tool_line("terminal", args, content)
    args["command"] = "make docs"
    assert "make docs" in tool_line("terminal", args, content)
    failures.clear_cache()


def test_older_copies_of_a_later_result_are_never_summarised(monkeypatch: Any) -> None:
    # Their one-liner would be replaced by the back-reference: building it (a failure verdict
    # on a first pass) is wasted work, so the pass builds lines once the copies are known.
    built: list[str] = []
    real = plan.tool_line
    monkeypatch.setattr(plan, "tool_line", lambda *a: built.append(a[2]) or real(*a))
    body = "Error: boom\n" + "detail line\n" * 40
    other = "plain output line\n" * 30
    messages = [user("go")]
    for k in range(3):
        messages += [assistant("", call(f"c{k}", "terminal", command="make")), tool(f"c{k}", body[:1] + body[1:])]
    messages += [assistant("", call("d", "terminal", command="ls")), tool("d", other)]
    messages += [user("next"), assistant("ok")]
    out, stats = prune_tool_results(messages, protect_tail_count=2)
    assert stats.deduplicated == 2 and stats.demoted == 2
    assert [text is messages[6]["content"] for text in built] == [True, False]  # the newest copy, then `other`
    assert out == plain_prune(messages, 2)[0]


def test_a_line_is_judged_once_per_string_and_flags(monkeypatch: Any) -> None:
    failures.clear_cache()
    judged: list[bool] = []
    real = oneliners._failure_of
    monkeypatch.setattr(oneliners, "_failure_of", lambda c, e, r: judged.append(r) or real(c, e, r))
    content = "Error: boom\n" + "detail line\n" * 40
    for args in ('{"command": "make"}', '{"command": "make"}', '{"command": "make test"}'):
        assert tool_line("terminal", args, content) == summarize_tool_result("terminal", args, content)
    assert judged == [False]  # the first line judged; the next ones reuse the verdict
    # A verdict that ``failure_of`` remembered for the same flags serves a line too ...
    other = "Error: bang\n" + "detail line\n" * 40
    verdict = failures.failure_of(other, reads=True)
    assert tool_line("read_file", '{"path": "a.py"}', other) == summarize_tool_result("read_file", '{"path": "a.py"}', other)
    assert judged == [False]
    # ... and one for other flags does not.
    assert tool_line("terminal", '{"command": "cat a"}', other) == summarize_tool_result("terminal", '{"command": "cat a"}', other)
    assert judged == [False, False]
    assert verdict is None and failures.failure_of(other) is not None
    assert len(failures._verdicts) == 2  # one entry per string, counted once
    assert failures._held == len(content) + len(other)
    failures.clear_cache()


def test_a_remembered_line_serves_only_the_same_call_and_error_flag() -> None:
    failures.clear_cache()
    content = "Error: boom\n" + "detail line\n" * 40

    def demoted(arguments: Any, is_error: Any = None) -> str:
        result = tool("c", content)
        if is_error is not None:
            result["_is_error"] = is_error
        messages = [user("go"), {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "terminal", "arguments": arguments}}]},
            result, user("next"), assistant("ok")]
        out, _ = prune_tool_results(messages, protect_tail_count=2)
        return str(out[2]["content"])

    args = json.dumps({"command": "make"})
    first = demoted(args)
    assert first == summarize_tool_result("terminal", args, content)
    assert demoted(json.dumps({"command": "make"})) == first  # an equal string: the memo's line
    other = json.dumps({"command": "make docs"})
    assert demoted(other) == summarize_tool_result("terminal", other, content) != first
    assert demoted(args, True) == summarize_tool_result("terminal", args, content, True)
    assert demoted({"command": "make docs"}) == summarize_tool_result("terminal", other, content)
    assert demoted(None) == summarize_tool_result("terminal", None, content)
    failures.clear_cache()

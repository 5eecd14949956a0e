"""Failure detection's fast paths give exactly what their plain forms give (issue 13).

Failure lines are computed once per demoted result over long histories, so their hot parts
are written for speed; each is compared here with its plain form over generated inputs.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins._common import error_text, failures

from hypothesis_budget import examples

_BREAKS = ("\n", "\r\n", "\r", "\x0b", "\x85", "\u2028", "\n\n")
_LINE_TEXT = st.one_of(
    st.text(alphabet="ab Ee:\t\x1b[0m", max_size=300),
    st.sampled_from(["", "   ", "Exit code 1", "(Open file: x.py)", "bash-$", "Error: boom", "x" * 700]),
)


@st.composite
def windows(draw: st.DrawFn) -> str:
    lines = draw(st.lists(_LINE_TEXT, max_size=60))
    breaks = draw(st.lists(st.sampled_from(_BREAKS), min_size=len(lines), max_size=len(lines)))
    return "".join(line + brk for line, brk in zip(lines, breaks, strict=True)) + draw(_LINE_TEXT)


@settings(max_examples=examples(150), deadline=None)
@given(windows(), st.integers(min_value=1, max_value=6))
def test_body_lines_from_a_prefix_equal_the_lines_of_the_whole_window(window: str, limit: int) -> None:
    assert error_text._body_lines(window, limit) == error_text._body_lines_plain(window, limit)


def test_body_lines_need_the_whole_window_when_its_start_is_empty() -> None:
    window = "\n" * 5_000 + "first\nsecond\r\nthird\n"
    assert error_text._body_lines(window, 4) == ["first", "second", "third"]
    assert error_text._body_lines("a" * 1_023 + "\r\nb\nc", 2) == ["a" * 1_023, "b"]


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


_KEYS = st.sampled_from(
    ["exit_code", "returncode", "error", "success", "output", "stderr", "stdout", "message", "content", "metadata", "x"]
)
_STATUS = st.one_of(_JSON, st.sampled_from(["Error: boom", "Traceback (most recent call last):\nKeyError: 'k'", ""]))


@settings(max_examples=examples(200), deadline=None)
@given(
    st.dictionaries(_KEYS, _STATUS, max_size=5),
    st.sampled_from(["", " ", "\n\nContext file: AGENTS.md\n", "}"]),
    st.booleans(),
    st.booleans(),
)
def test_orjson_decoding_gives_the_plain_decoders_failure(
    obj: dict[str, object], trailer: str, compact: bool, is_error: bool
) -> None:
    text = json.dumps(obj, separators=(",", ":") if compact else None) + trailer
    fast = failures.failure_of(text, is_error=is_error)
    original = failures._decode_object
    failures._decode_object = failures._decode_object_plain
    try:
        plain = failures.failure_of(text, is_error=is_error)
    finally:
        failures._decode_object = original
    assert fast == plain


@settings(max_examples=examples(200), deadline=None)
@given(_JSON.filter(lambda v: not isinstance(v, dict)))
def test_orjson_decoding_of_other_values_is_never_a_dict_when_the_plain_one_is_not(value: object) -> None:
    text = json.dumps(value)
    assert (type(failures._decode_object(text)) is dict) == (type(failures._decode_object_plain(text)) is dict)


def test_orjson_decoding_keeps_the_plain_answer_for_what_orjson_refuses() -> None:
    assert failures._decode_object('{"a": NaN}')["a"] != failures._decode_object('{"a": NaN}')["a"]
    assert failures._decode_object('{"a": 1} trailing') == {"a": 1}
    assert failures._decode_object('{"a": "\\ud800"}') == {"a": "\ud800"}
    assert failures._decode_object("[" * 5_000 + "]" * 5_000) is None
    assert failures._decode_object('{"a": 1, "a": 2}') == {"a": 2}
    assert failures._decode_object('{"exit_code": -9223372036854775809}') == {"exit_code": -(2**63) - 1}


_OUTPUTS = st.one_of(
    st.text(alphabet="ab \n:E", max_size=40),
    st.sampled_from(["Error: boom\n", "Traceback (most recent call last):\nKeyError: 'k'\n", "Exit code 2\n",
                     '{"output": "x", "exit_code": 1}', '{"success": false, "error": "bad"}']),
)


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_OUTPUTS, min_size=1, max_size=4), st.integers(min_value=0, max_value=3_000), st.booleans(), st.booleans())
def test_remembered_verdicts_equal_a_fresh_judgement(parts: list[str], pad: int, is_error: bool, reads: bool) -> None:
    content = parts[0] + "filler line\n" * (pad // 12) + "".join(parts[1:])
    plain = failures._failure_of(content, is_error, reads)
    assert failures.failure_of(content, is_error=is_error, reads=reads) == plain
    assert failures.failure_of(content, is_error=is_error, reads=reads) == plain  # remembered
    assert failures.failure_of(content, is_error=not is_error, reads=reads) == failures._failure_of(
        content, not is_error, reads)


def test_a_remembered_string_is_let_go_once_the_host_drops_it() -> None:
    failures.clear_cache()
    kept = "".join(["line\n"] * 400) + "Error: boom\n"
    dropped = "".join(["line\n"] * 401) + "Error: bang\n"
    assert failures.failure_of(kept) is not None and failures.failure_of(dropped) is not None
    assert failures.failure_of(kept, reads=True) is None  # the flags are part of the verdict
    assert len(failures._verdicts) == 2
    del dropped
    failures._sweep()
    assert [entry[0] for entry in failures._verdicts.values()] == [kept]
    assert failures._held == len(kept)
    failures.clear_cache()


def test_the_verdict_memo_stays_within_its_entry_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    failures.clear_cache()
    monkeypatch.setattr(failures, "CACHE_ENTRIES", 8)
    held = [f"{i}\n" + "line\n" * 300 + ("Error: boom\n" if i % 2 else "ok\n") for i in range(50)]
    for text in held:  # all still held by the caller: only the hard bound can let them go
        assert failures.failure_of(text) == failures._failure_of(text, False, False)
        assert len(failures._verdicts) <= 8
    assert failures._held == sum(len(entry[0]) for entry in failures._verdicts.values())
    assert all(failures.failure_of(t) == failures._failure_of(t, False, False) for t in held)
    failures.clear_cache()


# --- one pass per region: detection, exit codes, error lines, big JSON bodies --------------

_PIECES = st.sampled_from([
    "Error: boom", "error: x", "ERROR: y", "fatal: z", "FATAL: w", "KeyError: 'k'", "pkg.mod.ValueError: v",
    "  error: indented", "\x1b[31mError: red", "except sqlite3.Error:", "log('error: no')", '"error": null',
    "Traceback (most recent call last):", "  File \"app/x.py\", line 3, in f", "x" * 70 + " Error: far",
    '{"name": "a",', "def f(a):", "ok", "", "error:", "Error:  ", "rror:", "ATAL:", "exit code: 2", "Exit code 1",
    "[The command completed with exit code 1.]", "eXit status 4", "returned non-zero exit status 3", "E   KeyError",
    "FAILED tests/a.py::t - KeyError", "=== 1 failed in 0.1s ===", "gh: command not found", "** (RuntimeError) x",
    "main.c:3:1: error: bad", "12 tests, 2 failures", "Assertion with == failed", "[INFO] x [ERROR] y",
])


@st.composite
def outputs_with_regions(draw: st.DrawFn) -> str:
    """Outputs whose lines sit around the detection spans and read windows (so both ends count)."""
    lines = draw(st.lists(_PIECES, max_size=12))
    pad = draw(st.sampled_from([0, 100, 480, 500, 1_000, 1_500, 2_000, 2_100, 3_000, 3_500, 6_000, 12_000]))
    filler = draw(st.sampled_from(["a", "line of output\n", "x: 1\n", " "]))
    where = draw(st.integers(min_value=0, max_value=len(lines)))
    padding = (filler * (pad // len(filler) + 1))[:pad]
    return "\n".join(lines[:where]) + "\n" + padding + "\n".join(lines[where:])


@settings(max_examples=examples(300), deadline=None)
@given(outputs_with_regions())
def test_one_regex_pass_finds_what_the_four_needle_scans_find(text: str) -> None:
    assert failures._text_says_failed(text) == failures._text_says_failed_plain(text)


def test_opening_candidates_are_counted_per_needle_as_before() -> None:
    busy = ("x = 'rror: no'; " * 20)[:500] + "\nError: yes"
    assert failures._text_says_failed(busy) == failures._text_says_failed_plain(busy)
    crowded = "a rror: b\n" * 17 + "Error: late"
    assert failures._text_says_failed(crowded) is failures._text_says_failed_plain(crowded) is False
    mixed = "a rror: b\n" * 15 + "a RROR: b\n" + "Error: found\n"
    assert failures._text_says_failed(mixed) is failures._text_says_failed_plain(mixed) is True
    across = "E" + "x" * 511 + "rror: a"  # a word cut by the span's start is not an opening
    assert failures._text_says_failed("Err\n" + "y" * 3_000) is False
    assert failures._text_says_failed(across) == failures._text_says_failed_plain(across)


def plain_failure_exit_code(text: str) -> str | None:
    match = error_text.HEADER_EXIT.match(text)
    if match:
        return match.group(1)
    found = None
    for found in failures._TAIL_EXIT.finditer(text[-failures.EXIT_TAIL:]):  # noqa: B007
        pass
    return found.group(1) if found else None


@settings(max_examples=examples(200), deadline=None)
@given(outputs_with_regions())
def test_exit_codes_are_the_last_match_in_the_tail(text: str) -> None:
    assert failures._exit_code(text) == plain_failure_exit_code(text)


def test_exit_codes_in_any_case() -> None:
    for text, code in {"eXit status 4": "4", "x" * 700 + "EXIT CODE: 3": "3", "exit code: 2\n" + "y" * 700: None,
                       "Exit code 5\nrest": "5", "the process exited with code 9": None, "exit_status=9": "9", "no code here x": None,
                       "y" * 700 + "returned non-zero exit status 7": "7",
                       "y" * 590 + "returned non-zero exit status 6": "6",
                       "q" * 700 + "Command completed with exit code 2": "2",
                       "exıt code: 3, then exited": "3", "EXİT STATUS 8": "8"}.items():
        assert failures._exit_code(text) == plain_failure_exit_code(text) == code, text


@settings(max_examples=examples(300), deadline=None)
@given(outputs_with_regions())
def test_first_and_last_error_lines_from_both_ends_equal_all_lines(text: str) -> None:
    assert error_text.error_lines(text) == error_text.error_lines_plain(text)


def test_last_error_line_is_found_past_long_lines_and_repeats() -> None:
    cases = [
        "KeyError: 'a'\n" + "filler\n" * 400 + "ValueError: b\n" + "z" * 3_000,
        "KeyError: 'a'\n" + "q" * 5_000 + "\nValueError: b",
        "w" * 5_000 + "\nValueError: only\n" + "filler\n" * 300,
        "Error: same\n" + "filler\n" * 300 + "Error: same\n",
        "filler\n" * 2_000 + "fatal: end",
    ]
    for text in cases:
        assert error_text.error_lines(text) == error_text.error_lines_plain(text), text[:40]
    assert error_text.error_lines(cases[0]) == ("KeyError: 'a'", "ValueError: b")
    assert error_text.error_lines(cases[3]) == ("Error: same", "")


@settings(max_examples=examples(150), deadline=None)
@given(st.text(alphabet='ab ,"\t\n\\', max_size=80), st.integers(min_value=0, max_value=80))
def test_json_body_end_is_the_stripped_slice(text: str, start: int) -> None:
    start = min(start, len(text))
    expected = start + len(text[start:].rstrip().rstrip(",").rstrip().removesuffix('"'))
    assert failures._body_end(text, start, len(text)) == expected


def test_json_body_end_of_a_long_separator_run() -> None:
    text = 'body"' + " " * 100 + "," * 100 + " " * 100  # past the hand-run budget: the plain form
    assert failures._body_end(text, 0, len(text)) == 4


_SPACES = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "é", "漢", " ", "\x1b", "\x1b[31m", "\x00", *_SPACES]), max_size=60),
       st.sampled_from([0, 1, 2_040, 2_050]))
def test_a_line_collapses_as_its_words_joined(parts: list[str], pad: int) -> None:
    text = "w" * pad + "".join(parts)
    assert error_text._one_line(text) == error_text._one_line_plain(text)


def test_printable_text_has_no_whitespace_but_the_space() -> None:
    # What the fast path of ``_one_line`` relies on, over the whole of Unicode.
    import sys

    assert all(not chr(c).isprintable() for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 0x20)


def test_a_json_exit_code_int_cannot_read_is_no_exit_code() -> None:
    # str.isdigit() takes superscripts and other digits int() refuses: never an exception.
    for code in ("²", "--1", "1²"):
        failure = failures.failure_of(json.dumps({"exit_code": code, "output": "Error: boom"}), is_error=True)
        assert failure is not None and failure.code is None and "Error: boom" in failure.error
    assert failures.failure_of(json.dumps({"exit_code": "٣"}, ensure_ascii=False)) == failures.Failure("3", "", None)


_STATUS_PARTS = st.sampled_from([
    '"exit_code": 0', '"exit_code": 2', '"exit_code":"3"', '"returncode": 0', '"returncode": -1', '"error": null',
    '"error": ""', '"error": "boom"', '"error":\n{}', '"success": false', '"exit_code"', '"error"', '"', ": ", ", ",
    "x" * 600, "\n",
])


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_STATUS_PARTS, max_size=12).map("".join))
def test_json_failure_hints_start_at_their_keys_as_everywhere(body: str) -> None:
    text = "{" + body + "}"
    assert failures._json_may_fail(text) == failures._json_may_fail_plain(text)

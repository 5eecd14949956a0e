"""Context files: the cap per source, head/tail truncation, and the cap shared by a chain."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_core import Config, load_config
from hermes_core.diagnostics import collecting
from hermes_plugins.context_files import reading
from hermes_plugins.context_files.reading import read_candidate
from hermes_plugins.context_files.sizing import fit_files, max_chars, share
from hermes_plugins.context_files.truncate import (
    LINE_SLACK_MAX,
    cut_head,
    cut_tail,
    marker,
    part_sizes,
    truncate_text,
)

from hypothesis_budget import examples

MARKER_SLACK = 4  # the blank lines around the marker


def config(**context: object) -> Config:
    return load_config(data={"context": context}, env={})


# --- the cap ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "context_length,expected",
    [(8_000, 20_000), (200_000, 48_000), (1_000_000, 240_000), (3_000_000, 500_000)],
)
def test_cap_follows_the_window(context_length: int, expected: int) -> None:
    assert max_chars(Config(), context_length) == expected


@pytest.mark.parametrize("context_length", [None, 0, -5, "200000", True, 1.5e6])
def test_cap_without_a_usable_window_is_20000(context_length: object) -> None:
    assert max_chars(Config(), context_length) == 20_000  # type: ignore[arg-type]


def test_configured_cap_always_wins() -> None:
    assert max_chars(config(file_max_chars=1000), 200_000) == 1000
    assert max_chars(config(file_max_chars=900_000), 8_000) == 900_000
    assert max_chars(config(file_max_chars=1000), None) == 1000


# --- truncate_text ------------------------------------------------------------------------


def test_text_at_the_cap_is_unchanged_and_one_more_is_cut() -> None:
    same = truncate_text("x" * 20_000, 20_000, label="AGENTS.md", read_path="/p/AGENTS.md")
    assert same.text == "x" * 20_000 and not same.truncated
    cut = truncate_text("x" * 21_000, 20_000, label="AGENTS.md", read_path="/p/AGENTS.md")
    assert cut.truncated and len(cut.text) < 21_000
    assert "/p/AGENTS.md" in cut.text and "read_file" in cut.text


def test_head_and_tail_markers_survive() -> None:
    text = "HEAD_MARKER " + "x" * 30_000 + " TAIL_MARKER"
    cut = truncate_text(text, 20_000, label="AGENTS.md", read_path="/p/AGENTS.md")
    assert cut.text.startswith("HEAD_MARKER") and cut.text.endswith("TAIL_MARKER")


def test_keeps_seventy_percent_head_and_twenty_percent_tail() -> None:
    text = "a" * 50_000 + "b" * 50_000  # no line breaks: the cut lands exactly
    cut = truncate_text(text, 10_000, label="f", read_path="/f")
    assert (cut.head_chars, cut.tail_chars, cut.total_chars) == (7_000, 2_000, 100_000)
    assert cut.kept_chars == 9_000
    assert cut.text.startswith("a" * 7_000 + "\n\n[") and cut.text.endswith("]\n\n" + "b" * 2_000)
    assert "7,000" in cut.text and "2,000" in cut.text and "100,000" in cut.text


def test_cut_lands_on_a_line_break_when_one_is_near() -> None:
    lines = [f"line {i:05d} " + "." * 40 for i in range(2_000)]
    text = "\n".join(lines)
    cut = truncate_text(text, 10_000, label="f", read_path="/f")
    head = cut.text[: cut.head_chars]
    tail = cut.text[len(cut.text) - cut.tail_chars :]
    assert head.endswith("\n") and head.rstrip("\n") in text
    assert all(line in lines for line in head.splitlines())
    assert all(line in lines for line in tail.splitlines())
    assert cut.head_chars >= 7_000 - min(700, LINE_SLACK_MAX)


def test_cut_never_splits_crlf() -> None:
    head_size, tail_size = part_sizes(1_000)
    # The only line ending near either cut sits exactly across it.
    text = "x" * (head_size - 1) + "\r\n" + "y" * 5_000 + "\r\n" + "z" * (tail_size - 1)
    assert cut_head(text, head_size) == "x" * (head_size - 1)
    tail = cut_tail(text, tail_size)
    assert not tail.startswith("\n") and tail == "z" * (tail_size - 1)
    # With no slack at all (a tiny cap) the CR/LF pair is still kept whole.
    assert not cut_head("ab\r\ncd", 3).endswith("\r")
    assert not cut_tail("ab\r\ncd", 3).startswith("\n")


def test_marker_names_the_path_and_the_tool() -> None:
    note = marker("AGENTS.md", "/repo/AGENTS.md", 7, 2, 100)
    assert "/repo/AGENTS.md" in note and "read_file" in note and "AGENTS.md" in note
    assert "about" in marker("x", "/x", 1, 1, 10, approximate=True)


def _line_slack(size: int) -> int:
    return min(int(size * 0.1), LINE_SLACK_MAX)


@settings(max_examples=examples(150), deadline=None)
@given(
    text=st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=3_000)
    | st.lists(st.sampled_from(["é", "日本", "🙂", "\r\n", "\n", "\r", "abc", " "]), max_size=600).map("".join),
    cap=st.integers(min_value=1, max_value=2_500),
)
def test_truncation_invariants(text: str, cap: int) -> None:
    cut = truncate_text(text, cap, label="AGENTS.md", read_path="/repo/AGENTS.md")
    cut.text.encode("utf-8")  # valid UTF-8: no lone surrogate was produced
    if not cut.truncated:
        assert cut.text == text
        return
    head_size, tail_size = part_sizes(cap)
    note = marker("AGENTS.md", "/repo/AGENTS.md", cut.head_chars, cut.tail_chars, len(text))
    assert len(cut.text) <= cap + len(note) + MARKER_SLACK
    assert cut.head_chars <= head_size and cut.tail_chars <= tail_size
    head = text[: cut.head_chars]
    tail = text[len(text) - cut.tail_chars :]
    assert cut.text.startswith(head) and cut.text.endswith(tail) and note in cut.text
    # The kept text starts with the original's first line and ends with its last line
    # whenever the kept head and tail are long enough to hold them.
    lines = text.split("\n")
    if cut.head_chars > len(lines[0]):
        assert cut.text.split("\n")[0] == lines[0]
    if cut.tail_chars > len(lines[-1]):
        assert cut.text.split("\n")[-1] == lines[-1]
    # A CR/LF pair is never cut in two.
    assert not (head.endswith("\r") and text[cut.head_chars] == "\n")
    assert not (tail.startswith("\n") and text[len(text) - cut.tail_chars - 1] == "\r")
    # When a line break lies within the slack, the cut is on a line boundary.
    slack = _line_slack(head_size)
    if "\n" in text[max(0, head_size - slack) : head_size]:
        assert head.endswith("\n")


# --- the seek path: a huge file is read as a head and a tail ---------------------------------


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.lists(st.sampled_from(["é", "日本語", "🙂", "\r\n", "\n", "ascii text ", "x"]),
                  min_size=50, max_size=1_500).map("".join),
    cap=st.integers(min_value=10, max_value=300),
)
def test_seek_path_keeps_whole_characters(
    text: str, cap: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reading, "WHOLE_READ_MIN_BYTES", 0)
    path = tmp_path / "AGENTS.md"
    path.write_bytes(text.encode("utf-8"))
    with collecting() as warnings:
        found = read_candidate(path, max_chars=cap, plugin="t")
        assert found is not None
        (fitted,) = fit_files([found], ["AGENTS.md"], max_chars=cap, loader="t")
    stripped = text.strip()
    assert "\ufffd" not in fitted.text
    assert not [w for w in warnings if w.kind == "context_file_invalid_utf8"]
    if found.complete:
        assert found.head == stripped
    else:
        assert stripped.startswith(found.head) and stripped.endswith(found.tail)
        assert fitted.truncated and len(fitted.text) <= cap + 400
        before, _, after = fitted.text.partition("[... about ")
        kept_tail = after.partition("missing part matters.]")[2].lstrip("\n")
        assert stripped.startswith(before.rstrip("\n")) and stripped.endswith(kept_tail)
        assert len(before.rstrip("\n")) + len(kept_tail) <= fitted.kept_chars


# --- one cap shared by several files -----------------------------------------------------------


def test_share_keeps_small_files_whole_and_splits_the_rest() -> None:
    assert share([100, 200], 1_000) == [100, 200]
    assert share([100, 5_000, 9_000], 1_000) == [100, 450, 450]
    assert sum(share([3_000] * 7, 1_000)) <= 1_000
    assert share([], 1_000) == []

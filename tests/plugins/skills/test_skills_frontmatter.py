"""SKILL.md frontmatter: the fast parser agrees with YAML on everything it accepts."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermes_plugins.skills.frontmatter import (
    _WORDS,
    parse_fast,
    parse_frontmatter,
    parse_yaml,
    split_frontmatter,
)

from hypothesis_budget import examples

ACTIVE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # what the fallback uses
LOADERS = [yaml.SafeLoader] + ([yaml.CSafeLoader] if hasattr(yaml, "CSafeLoader") else [])


def yaml_reading(source: str, loader: Any) -> Any:
    data = yaml.load(source, Loader=loader)  # noqa: S506 - safe loaders only
    return {} if data is None else data


def assert_agrees(source: str) -> None:
    fast = parse_fast(source)
    if fast is None:
        return
    for loader in LOADERS:
        try:
            expected = yaml_reading(source, loader)
        except yaml.YAMLError as exc:  # pragma: no cover - the failure message is the point
            raise AssertionError(
                f"fast parser accepted what {loader.__name__} rejects: {source!r} -> {fast!r}: {exc}"
            ) from None
        # repr() also compares types: True vs 1, 1.0 vs 1, None vs "".
        assert repr(fast) == repr(expected), (source, fast, expected, loader.__name__)


# --- split -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: a\n---\nbody", "name: a\n"),
        ("\ufeff---\nname: a\n---\nbody", "name: a\n"),
        ("---\nname: a\n---", "name: a\n"),  # the closing fence may end the file
        ("---   \nname: a\n---  \nbody", "name: a\n"),
        ("---\r\nname: a\r\n---\r\nbody", "name: a\r\n"),
        ("---\n---\nbody", ""),
        ("no frontmatter", None),
        ("---\nname: a\nnever closed", None),
        ("---x\nname: a\n---\n", None),
        ("---\nname: a\n----\nstill inside\n---\n", "name: a\n----\nstill inside\n"),
    ],
)
def test_split_frontmatter(text: str, expected: str | None) -> None:
    assert split_frontmatter(text) == expected


# --- the fast path's subset --------------------------------------------------------------

ACCEPTED = [
    "name: x\ndescription: A useful test skill\n",
    "name: x\ndescription: \"Quoted: with a colon\"\n",
    "name: x\ndescription: 'It''s single-quoted'\n",
    "tags: [a, b c, 1, true, ~, null, 1.5]\n",
    "tags: [\"a, b\", 'c']\n",
    "tags: []\n",
    "version: 1.0\ncount: 12\nflag: yes\noff_switch: Off\nnothing: ~\n",
    "version: 1.0.0\nurl: http://example.com/a?b=c\nlang: C#\n",
    "description: Use it # a comment\n",
    "# a comment line\nname: x\n\n   \nname: y\n",
    "metadata:\n  hermes:\n    requires_tools: [web]\n    fallback_for_tools:\n      - a\n      - b\n",
    "tags:\n- a\n- b\nname: x\n",
    "empty:\nname: x\n",
    "  name: indented root\n  description: fine\n",
    "description: naïve café — ünïcode ✓ 日本語\n",
    "weird: -x\nq: ?x\nc: :x\nneg: -3\nplus: +4\nzero: 0\n",
]

REJECTED = [
    "description: >\n  folded\n  text\n",
    "description: |\n  literal\n",
    "anchor: &a x\nalias: *a\n",
    "tagged: !!str 1\n",
    "date: 2024-01-01\n",
    "hex: 0x1F\n",
    "octal: 012\n",
    "sexagesimal: 1:30\n",
    "inf: .inf\n",
    "mapping: {a: 1}\n",
    "escaped: \"a\\nb\"\n",
    "tab:\tvalue\n",
    "bad: a: b\n",
    "multi: first\n  continued\n",
    "list:\n  - a: 1\n",
    "on: reserved key\n",
    "? complex\n",
    "trailing: [a, b,]\n",
    "nested: [a, [b]]\n",
    "ctrl: a\x07b\n",
    "linesep: a\u2028b\n",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_fast_path_accepts_and_agrees(source: str) -> None:
    assert parse_fast(source) is not None
    assert_agrees(source)


@pytest.mark.parametrize("source", REJECTED)
def test_fast_path_leaves_the_rest_to_yaml(source: str) -> None:
    assert parse_fast(source) is None
    # parse_frontmatter still answers, through YAML (or reports why YAML could not).
    data, error = parse_frontmatter("---\n" + source + "---\n")
    try:
        expected = yaml_reading(source, ACTIVE_LOADER)
    except yaml.YAMLError:
        assert error is not None and "invalid YAML" in error
        return
    if isinstance(expected, dict):
        assert (data, error) == (expected, None)
    else:
        assert data == {} and error is not None


def test_yaml_fallback_reads_block_scalars() -> None:
    data, error = parse_frontmatter("---\nname: x\ndescription: >\n  Folded\n  over lines.\n---\n")
    assert error is None
    assert data == {"name": "x", "description": "Folded over lines.\n"}


def test_invalid_yaml_reports_a_line_and_salvages_name_and_description() -> None:
    data, error = parse_frontmatter("---\nname: good\ndescription: still readable\nbroken: [a, b\n---\n")
    assert error is not None and "invalid YAML" in error and "line" in error
    assert data == {"name": "good", "description": "still readable"}


def test_non_mapping_frontmatter_is_reported() -> None:
    data, error = parse_frontmatter("---\n- just\n- a list\n---\n")
    assert data == {} and error is not None and "not a mapping" in error


def test_empty_and_missing_frontmatter() -> None:
    assert parse_frontmatter("---\n---\nbody") == ({}, None)
    assert parse_frontmatter("# Just markdown\n") == ({}, None)
    assert parse_fast("") == {}
    assert parse_fast("# only a comment\n") == {}


def test_word_table_matches_yaml() -> None:
    for word, value in _WORDS.items():
        assert repr(yaml.safe_load(f"x: {word}")["x"]) == repr(value)
        assert repr(parse_fast(f"x: {word}\ny: [{word}]\n")) == repr({"x": value, "y": [value]})


@pytest.mark.parametrize("value", ["1.0.0", "10.2.3", "1..2", "0.0.0.0", "1.2", "1.", "12", "-7", "3.14"])
def test_numbers_and_version_strings(value: str) -> None:
    assert_agrees(f"version: {value}\n")
    assert parse_fast(f"version: {value}\n") is not None


def test_parse_yaml_uses_a_safe_loader() -> None:
    with pytest.raises(yaml.YAMLError):
        parse_yaml("x: !!python/object/apply:os.system ['true']\n")


# --- property: whatever the fast path accepts, YAML reads the same -------------------------

PIECES = st.sampled_from([
    "a", "Search", "x y", "on", "yes", "No", "null", "~", "1", "-1", "+2", "0", "01", "1.5", "1.",
    ".5", "-", "?", ":", "-x", "?x", ":x", "a:b", "a: b", "a:", " #c", "#", "C#", "'", "''", '"',
    "\\", "[", "]", ",", "{", "}", "é", "日本", "2024-01-01", "0x1f", "1:30", "true", "TRUE",
    "tRue", ".inf", "=", "<<", "1_0", "!", "&", "*", "|", ">", "%", "@", "`", "  ",
    "http://a.b/c?d=e", "1e3", "\u00a0", "\t", "\u2028",
])
TEXT = st.lists(PIECES, min_size=1, max_size=5).map("".join)
KEYS = st.sampled_from(
    ["name", "description", "tags", "metadata", "hermes", "on", "y", "null", "a.b", "x-y", "_k", "True"]
)
SCALAR = TEXT.flatmap(lambda t: st.sampled_from([t, f'"{t}"', f"'{t}'"]))
FLOW = st.lists(SCALAR, max_size=4).map(lambda items: "[" + ", ".join(items) + "]")
INLINE = st.one_of(SCALAR, FLOW, st.just(""))


@st.composite
def blocks(draw: Any, indent: int = 0, depth: int = 0) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        key = draw(KEYS)
        choices = ["inline", "inline", "seq", "seq_same", "map"] if depth < 2 else ["inline", "seq"]
        kind = draw(st.sampled_from(choices))
        pad = " " * indent
        if kind == "inline":
            lines.append(f"{pad}{key}: {draw(INLINE)}".rstrip() + draw(st.sampled_from(["", " # c", "  "])))
        elif kind in ("seq", "seq_same"):
            lines.append(f"{pad}{key}:")
            item_indent = indent if kind == "seq_same" else indent + draw(st.integers(1, 3))
            lines.extend(" " * item_indent + "- " + draw(SCALAR) for _ in range(draw(st.integers(1, 3))))
        else:
            lines.append(f"{pad}{key}:")
            lines.extend(draw(blocks(indent + draw(st.integers(1, 4)), depth + 1)))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# comment", "   # c", "   "])))
    return lines


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(blocks().map("\n".join))
def test_fast_parser_agrees_with_yaml_on_structured_frontmatter(source: str) -> None:
    assert_agrees(source)


LINE_PIECES = st.sampled_from([
    "name", "description", "a", "- ", "-", ": ", ":", " ", "  ", "#", " #", "'", '"', "[", "]",
    ", ", "{", "}", "~", "1.0", "true", "&a", "|", ">", "?", "é", "\t", "\r", "\ufeff", "=", "<<",
])


@settings(max_examples=examples(150), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.lists(LINE_PIECES, max_size=8).map("".join), max_size=8).map("\n".join))
def test_fast_parser_agrees_with_yaml_on_arbitrary_text(source: str) -> None:
    assert_agrees(source)

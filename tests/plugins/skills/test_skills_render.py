"""The rendered block: exact shape, the 60-character cut, names-only categories, the budget."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_plugins.skills.metadata import index_description, make_row
from hermes_plugins.skills.render import (
    CLOSING,
    HEADER,
    HERMES_INSTRUCTIONS,
    INSTRUCTIONS,
    MANAGE_INSTRUCTIONS,
    NAMES_ONLY_NOTE,
    estimate,
    render_index,
)

from hypothesis_budget import examples
from skills_support import index_lines


def rows(category: str, *skills: tuple[str, str]) -> list[list[Any]]:
    return sorted(
        (make_row({"name": n, "description": d}, category=category, dir_name=n, path=f"{category}/{n}")
         for n, d in skills),
        key=lambda r: r[1],
    )


def test_exact_block() -> None:
    groups = {
        "research": rows(
            "research", ("web-digest", "Summarize a long page."), ("arxiv-search", "Search arXiv papers.")
        ),
        "coding": rows("coding", ("no-desc", "")),
    }
    rendered = render_index(groups, {"research": "Look things up"})
    assert rendered.text == "\n".join([
        HEADER,
        INSTRUCTIONS + " " + MANAGE_INSTRUCTIONS,
        "",
        "<available_skills>",
        "  coding:",
        "    - no-desc",
        "  research: Look things up",
        "    - arxiv-search: Search arXiv papers.",
        "    - web-digest: Summarize a long page.",
        "</available_skills>",
        "",
        CLOSING,
    ])
    assert rendered.skills == 3 and rendered.tokens == estimate(len(rendered.text))
    assert rendered.text.startswith("## Skills (mandatory)\n")


def test_nothing_visible_renders_nothing() -> None:
    assert render_index({}, {}).text == ""
    assert render_index({"empty": []}, {}).text == ""


@pytest.mark.parametrize(
    ("length", "shown"),
    [(59, 59), (60, 60), (61, 60), (100, 60)],
)
def test_description_cut_at_60(length: int, shown: int) -> None:
    description = "".join(chr(ord("a") + i % 26) for i in range(length))
    result = index_description(description)
    assert len(result) == shown
    if length > 60:
        assert result == description[:57] + "..."
    else:
        assert result == description


@settings(max_examples=examples(100), deadline=None)
@given(st.text(min_size=0, max_size=200))
def test_index_description_never_exceeds_60(description: str) -> None:
    result = index_description(description)
    assert len(result) <= 60
    assert result == description or (result.endswith("...") and description.startswith(result[:-3]))


def test_compacted_categories_keep_every_name() -> None:
    # spec §16.1 #8: nested categories follow their top-level parent.
    groups = {
        "social-media/twitter": rows("social-media/twitter", ("thread-writer", "Write threads"), ("b", "B")),
        "social-media": rows("social-media", ("poster", "Post things")),
        "coding": rows("coding", ("debug", "Debug things")),
    }
    rendered = render_index(groups, {"social-media": "Social"}, compact={"social-media"})
    lines = index_lines(rendered.text)
    assert lines == [
        "  coding:",
        "    - debug: Debug things",
        "  social-media [names only]: poster",
        "  social-media/twitter [names only]: b, thread-writer",
    ]
    assert rendered.compacted == ["social-media", "social-media/twitter"]
    assert rendered.text.endswith("\n\n" + NAMES_ONLY_NOTE)
    again = render_index(groups, {}, compact=set())
    assert "    - thread-writer: Write threads" in again.text
    assert NAMES_ONLY_NOTE not in again.text


def test_manage_and_hermes_sentences() -> None:
    groups = {"general": rows("general", ("hermes-agent", "Configure Hermes"))}
    assert MANAGE_INSTRUCTIONS not in render_index(groups, {}, manage=False).text
    assert HERMES_INSTRUCTIONS in render_index(groups, {}).text
    assert HERMES_INSTRUCTIONS not in render_index({"general": rows("general", ("x", "y"))}, {}).text


def big_groups() -> dict[str, list[list[Any]]]:
    text = "a description that is long enough to cost tokens"
    return {
        "huge": rows("huge", *[(f"h{i:02d}", text) for i in range(30)]),
        "medium": rows("medium", *[(f"m{i:02d}", text) for i in range(10)]),
        "small": rows("small", ("s1", "short")),
    }


def test_budget_collapses_largest_categories_first() -> None:
    groups = big_groups()
    full = render_index(groups, {})
    budget = full.tokens - 100  # collapsing "huge" alone is enough
    fitted = render_index(groups, {}, budget=budget)
    assert fitted.collapsed == ["huge"]
    assert not fitted.over_budget and fitted.tokens <= budget
    assert "  huge [names only]: " + ", ".join(f"h{i:02d}" for i in range(30)) in fitted.text
    assert "    - m00: a description" in fitted.text
    tighter = render_index(groups, {}, budget=fitted.tokens - 1)
    assert tighter.collapsed == ["huge", "medium"]
    assert tighter.tokens == estimate(len(tighter.text))


def test_budget_never_drops_a_name() -> None:
    groups = big_groups()
    rendered = render_index(groups, {}, budget=10)
    assert rendered.over_budget
    assert rendered.collapsed == ["huge", "medium", "small"]
    for bucket in groups.values():
        for row in bucket:
            assert row[1] in rendered.text


def test_budget_accounting_is_exact() -> None:
    groups = big_groups()
    for compact in (set(), {"small"}):
        full = render_index(groups, {}, compact=compact)
        same = render_index(groups, {}, compact=compact, budget=full.tokens)
        assert same.collapsed == [] and same.text == full.text

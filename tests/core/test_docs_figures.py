"""One page holds the measured figures (issue 33, item 7).

A topic page states a property in a sentence and links to ``docs/performance.md``, which gives
each figure with its date, machine and command. A figure copied into a topic page goes stale
without anyone noticing (the code gets faster or slower, the page keeps the old number), so
this test fails when a topic page or the README holds a timing (a number followed by ms, us
or µs, or a decimal number of seconds) or a decimal speed ratio (``1.5x``, ``1.5×``).

What is not a measurement of our code and matches anyway (a provider's documented price
multiplier, a version pattern) is listed in ``ALLOWED`` with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

from locations import ROOT

DOCS = ROOT / "docs"
FIGURES_PAGE = "performance.md"

#: A timing: a number followed by ms, us or µs ("1.2 ms", "0.5 µs", "35 us").
TIMING = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|us)\b")
#: Decimal seconds ("0.28 s", "3.1 s CPU"). Whole seconds are left out: on the topic pages they
#: are timeouts and budgets ("5 s"), settings rather than measurements.
SECONDS = re.compile(r"(?<![\w.])\d+\.\d+\s?s\b")
#: A decimal ratio ("1.05x", "0.02 x", "1.1×"). Whole multiples ("at most 3x", "<= 2×") are the
#: bars a page promises, which stay.
RATIO = re.compile(r"(?<![\w.])\d+\.\d+\s?[x×](?!\w)")
PATTERNS = (TIMING, SECONDS, RATIO)

#: (page, exact text on one line, why it is not a measurement of our code).
ALLOWED: tuple[tuple[str, str, str], ...] = (
    ("caching.md", "written again at\n  1.25x", "Anthropic's documented cache-write price"),
    ("caching.md", "written at 1.25x (5 m) or 2x", "Anthropic's documented cache-write price"),
    ("caching.md", "(0.1x for Claude)", "Anthropic's documented cached-read price"),
    ("caching.md", "(gpt-5 0.1x, gpt-4.1 0.25x, gpt-4o 0.5x)", "OpenAI's documented cached-read prices"),
    ("caching.md", "(Anthropic 0.1x, OpenAI\n  0.5x)", "the providers' documented cached-read prices"),
    ("caching.md", "else 1.25x input", "Anthropic's documented cache-write price"),
    ("caching.md", "OpenAI (0.5x reads)", "the column's pricing assumption, OpenAI's documented rate"),
    ("compressor.md", "over 1.5× its budget", "a threshold of the free passes, a setting"),
    ("compressor.md", "fit 1.5× the tail budget", "a threshold of the boundaries, a setting"),
    ("compressor.md", "than 1.5x the peak memory", "issue 29's bar, not a measurement"),
    ("embedding.md", "gpt-5 0.1x, gpt-4.1 0.25x, gpt-4o 0.5x, Claude 0.1x", "providers' prices"),
    ("recall.md", "goal of 5 ms.", "the search's goal, not a measurement"),
    ("report.md", "(else 1.25x input)", "Anthropic's documented cache-write price"),
    ("report.md", "else 0.1x Anthropic / 0.5x OpenAI; write 1.25x", "the providers' documented prices"),
    ("tools.md", "floored at 0.25x the mean idf", "a constant of rank_bm25's idf formula"),
    ("transcripts.md", "(the 0.1x header", "a Codex CLI version pattern (0.10 to 0.19)"),
)


def topic_pages() -> list[Path]:
    """Every page that must hold no figure: docs/*.md but the figures page, and the README."""
    pages = [path for path in sorted(DOCS.glob("*.md")) if path.name != FIGURES_PAGE]
    return [*pages, ROOT / "README.md"]


def figures_in(name: str, text: str) -> list[str]:
    """``line: figure`` for each measurement-looking figure the allow-list does not explain."""
    for page, allowed, _why in ALLOWED:
        if page == name:
            text = text.replace(allowed, re.sub(r"[^\n]", " ", allowed))
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern in PATTERNS:
            found += [f"{number}: {match.group(0)}" for match in pattern.finditer(line)]
    return found


def test_topic_pages_hold_no_measured_figures() -> None:
    stray = {
        page.name: hits
        for page in topic_pages()
        if (hits := figures_in(page.name, page.read_text(encoding="utf-8")))
    }
    assert not stray, (
        "measured figures belong in docs/performance.md (date, machine, command); leave the "
        f"property and a link on the topic page: {stray}"
    )


def test_the_patterns_catch_figures_and_leave_bars() -> None:
    caught = figures_in("x.md", "took 1.2 ms, 35 us a call, 0.5 µs, 0.28 s, 1.05x, 0.02 x, 1.1×.")
    assert [hit.split(": ")[1] for hit in caught] == [
        "1.2 ms", "35 us", "0.5 µs", "0.28 s", "1.05x", "0.02 x", "1.1×",
    ]
    bars = "at most 3x, <= 2×, a 5 s budget, SWE-agent 0.x, ATIF-v1.x, 10 ms ticks asked"
    assert figures_in("x.md", bars) == ["1: 10 ms"]


def test_every_allowance_is_still_needed() -> None:
    """An allow-list entry whose text left its page hides nothing; it goes."""
    stale = [
        (page, allowed)
        for page, allowed, _why in ALLOWED
        if allowed not in (DOCS / page).read_text(encoding="utf-8")
    ]
    assert not stale


def test_the_figures_page_exists_and_the_readme_links_it() -> None:
    assert (DOCS / FIGURES_PAGE).is_file()
    assert f"docs/{FIGURES_PAGE}" in (ROOT / "README.md").read_text(encoding="utf-8")

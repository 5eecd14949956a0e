"""Render the ``## Skills (mandatory)`` block, and fit it into a token budget.

Shape (spec §10.3 step 8): header and instructions, a blank line, ``<available_skills>``, one
line per category (``  <category>: <description>``) followed by its skills
(``    - <name>: <description>``, descriptions cut to 60 characters), ``</available_skills>``,
a blank line and a closing sentence. A *names-only* category is the single line
``  <category> [names only]: a, b, c``: compaction and the budget only ever take descriptions
away, never a name, so ``skill_view(name)`` can always be asked for.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Collection, Mapping, Sequence
from operator import itemgetter
from typing import Any

import attrs

from hermes_plugins.skills.metadata import ROW_LINE, ROW_NAME

HEADER = "## Skills (mandatory)"
OPEN_TAG = "<available_skills>"
CLOSE_TAG = "</available_skills>"
NAMES_ONLY = "[names only]"

INSTRUCTIONS = (
    "Each skill below is a saved procedure for one kind of task, often written down from the "
    "user's own conventions. Before you answer, read the list. When a skill fits the request, "
    "even partly, load it with skill_view(name) and follow it: loading one that turns out not "
    "to fit costs little, while working from memory when a skill exists costs the user's "
    "conventions."
)
MANAGE_INSTRUCTIONS = (
    "When a skill you loaded is wrong, out of date or misses a step you needed, correct it with "
    "skill_manage(action='patch'). After a hard or many-step task, offer to save how you did it "
    "as a new skill."
)
HERMES_SKILL = "hermes-agent"
HERMES_INSTRUCTIONS = (
    "For any question about configuring or running Hermes itself, load the hermes-agent skill "
    "first."
)
CLOSING = "Leave the skills aside only when none of them bears on the request."
NAMES_ONLY_NOTE = (
    "(Categories marked [names only] are listed without descriptions to keep this short; their "
    "skills load normally with skill_view(name).)"
)

_LINE = itemgetter(ROW_LINE)
_NAME = itemgetter(ROW_NAME)


@attrs.define(kw_only=True, eq=False)
class Rendered:
    text: str
    #: categories shown names-only because the session asked to compact them
    compacted: list[str]
    #: categories shown names-only to fit the token budget, largest first
    collapsed: list[str]
    #: estimated tokens of ``text`` (characters / 4)
    tokens: int
    skills: int
    over_budget: bool = False


def estimate(chars: int) -> int:
    return (chars + 3) // 4


def render_index(
    groups: Mapping[str, Sequence[list[Any]]],
    category_descriptions: Mapping[str, str],
    *,
    compact: Collection[str] = (),
    budget: int | None = None,
    manage: bool = True,
    hermes_pointer: bool = True,
) -> Rendered:
    """Render the block for ``groups``: category -> skill rows sorted by name, one per name
    (what ``index.select`` returns). No skill at all: ``text == ""``."""
    categories = sorted(c for c, rows in groups.items() if rows)
    if not categories:
        return Rendered(text="", compacted=[], collapsed=[], tokens=0, skills=0)
    count = sum(len(groups[c]) for c in categories)
    compacted = [c for c in categories if c.split("/", 1)[0] in compact]
    headers = {}
    for category in categories:
        description = category_descriptions.get(category)
        headers[category] = f"  {category}: {description}" if description else f"  {category}:"
    paragraph = [INSTRUCTIONS]
    if manage:
        paragraph.append(MANAGE_INSTRUCTIONS)
    if hermes_pointer and any(_has_name(groups[c], HERMES_SKILL) for c in categories):
        paragraph.append(HERMES_INSTRUCTIONS)
    intro = HEADER + "\n" + " ".join(paragraph)
    names_only = set(compacted)
    collapsed: list[str] = []
    over = False
    if budget is not None:
        collapsed, over = _fit(intro, groups, headers, categories, names_only, budget)
    body: list[str] = []
    for category in categories:
        rows = groups[category]
        if category in names_only:
            body.append(_names_only(category, rows))
        else:
            body.append(headers[category])
            body.extend(map(_LINE, rows))
    parts = [intro, "", OPEN_TAG, *body, CLOSE_TAG, "", CLOSING]
    if names_only:
        parts += ["", NAMES_ONLY_NOTE]
    text = "\n".join(parts)
    return Rendered(
        text=text,
        compacted=compacted,
        collapsed=collapsed,
        tokens=estimate(len(text)),
        skills=count,
        over_budget=over,
    )


def _names_only(category: str, rows: Sequence[list[Any]]) -> str:
    return f"  {category} {NAMES_ONLY}: {', '.join(map(_NAME, rows))}"


def _has_name(rows: Sequence[list[Any]], name: str) -> bool:
    at = bisect_left(rows, name, key=_NAME)
    return at < len(rows) and rows[at][ROW_NAME] == name


def _fit(
    intro: str,
    groups: Mapping[str, Sequence[list[Any]]],
    headers: Mapping[str, str],
    categories: list[str],
    names_only: set[str],
    budget: int,
) -> tuple[list[str], bool]:
    """Add the largest categories to ``names_only`` until the block fits ``budget``.

    Returns the categories collapsed, largest first, and whether the block is still over.
    """
    # The block is "\n".join(intro, "", OPEN, *body, CLOSE, "", CLOSING[, "", NOTE]).
    total = len(intro) + len(OPEN_TAG) + len(CLOSE_TAG) + len(CLOSING) + 5
    note = len(NAMES_ONLY_NOTE) + 2
    sizes: dict[str, int] = {}
    for category in categories:
        rows = groups[category]
        if category in names_only:
            total += len(_names_only(category, rows)) + 1
        else:
            sizes[category] = len(headers[category]) + 1 + sum(map(len, map(_LINE, rows))) + len(rows)
            total += sizes[category]
    if names_only:
        total += note
    collapsed: list[str] = []
    for category in sorted(sizes, key=lambda c: (-sizes[c], c)):
        if estimate(total) <= budget:
            break
        if not names_only:
            total += note
        total += len(_names_only(category, groups[category])) + 1 - sizes[category]
        names_only.add(category)
        collapsed.append(category)
    return collapsed, estimate(total) > budget

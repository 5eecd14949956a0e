"""The extractive handoff's sections: their titles and limits, the file list, and how a
previous summary (ours, or another agent's with its own headings) is read back into them.

``facts`` fills the sections from the turns, ``extractive`` merges and fits them under the cap.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from hermes_core.plugin import redact
from hermes_plugins.compressor.framing import split_summary_text

MAX_CHARS = 8_000
REQUEST_MAX = 2_500
REQUEST_ITEM_MAX = 200
ITEM_MAX = 400
FOCUS_SHARE = 0.65
RECENT_TEXT_MAX = 600

LATEST = "Latest user request"
REQUESTS = "User requests"
ERRORS = "Errors"
FILES = "Files"
COMMANDS = "Commands"
DECISIONS = "Decisions and constraints"
OPEN = "Open items"
LAST_STEP = "Last step before the cut"
EARLIER = "Earlier summary"
ACTIONS = "Completed actions"
FOCUS_PREFIX = "Focus: "
#: Display order of the list sections.
ORDER = (REQUESTS, ERRORS, FILES, COMMANDS, DECISIONS, OPEN, LAST_STEP, EARLIER, ACTIONS)
_KNOWN = {LATEST, *ORDER}
#: Older titles of ours (and the LLM prompt's), read into today's sections.
_ALIASES = {
    "Goal": EARLIER, "Errors and blockers": ERRORS, "Files touched": FILES, "Decisions": DECISIONS,
    "Open questions (may be stale)": OPEN, "Last turns before the cut": LAST_STEP,
    "Constraints and preferences": DECISIONS, "Remaining work (may be stale)": OPEN,
    "In progress (may be stale)": OPEN, "Current state": EARLIER, "Critical context": EARLIER,
    "Resolved questions": EARLIER,
}
STILL_FAILING = "still failing"
RESOLVED = "resolved"
STATUS = re.compile(r" — (still failing|resolved)$")
FILE_ITEM = re.compile(r"^(.+?) — (created|modified|deleted|read) \((.*)\)$")
_COUNT = re.compile(r"^(.+?) ×(\d+)$")

SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _one_line(text: str) -> bool:
    """Whether collapsing ``text``'s whitespace would change nothing: every whitespace but the
    ASCII space is not printable, so a printable text without double, leading or trailing
    spaces is its own collapse."""
    return text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " "


def clip_text(text: str, limit: int, redacting: Callable[[str], str] | None = None) -> str:
    """``text`` on one line, cut at a word boundary within ``limit`` (identifiers never split).

    A text that has to change is redacted first: joining lines hides a ``name: value`` line
    from the line-start pattern and a cut can leave too little of a key to recognise it. A
    text that stays as it is gets redacted with the rendered summary (``build_handoff``).
    ``redacting``: the walk's memo of ``redact`` (``Facts.clip``), else ``redact``.
    """
    if len(text) <= limit and text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text  # already one clean line (``_one_line``, inline: most texts end here)
    text = redact(text) if redacting is None else redacting(text)
    if not _one_line(text):
        # Collapsing the whitespace of a prefix gives a prefix of the whole's collapse: once
        # that is longer than the limit, the rest of a long text (a pasted log) cannot change
        # the cut, and is not split into words at all.
        collapsed = " ".join(text[: 4 * limit].split()) if len(text) > 4 * limit else ""
        text = collapsed if len(collapsed) > limit else " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "…"


def verbatim(text: str, limit: int) -> str:
    """A user's words as they were, or head and tail around an omission note when too long
    (redact ``text`` first: a cut can leave too little of a key to recognise it)."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    head = text[: int(limit * 0.7)]
    tail = text[-int(limit * 0.25):]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} characters omitted …]\n{tail}"


class FileList:
    """path -> (verb, {tool: count}); "created" turns into "modified" once a file was known."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[str, dict[str, int]]] = {}

    def add(self, path: str, verb: str, tool: str, count: int = 1) -> None:
        path = path.strip()
        if not path or len(path) > 300:
            return
        old = self.entries.get(path)
        if old is None:
            self.entries[path] = (verb, {tool: count})
            return
        old_verb, tools = old
        tools[tool] = tools.get(tool, 0) + count
        if old_verb == "read" and verb != "read":
            new_verb = "modified" if verb == "created" else verb
        elif old_verb != "read" and verb in ("modified", "created") and old_verb != verb:
            new_verb = "modified"
        elif verb == "deleted":
            new_verb = verb
        else:
            new_verb = old_verb
        self.entries.pop(path)
        self.entries[path] = (new_verb, tools)  # newest activity last

    def items(self, changed: bool) -> list[str]:
        out = []
        for path, (verb, tools) in self.entries.items():
            if (verb != "read") == changed:
                counts = ", ".join(f"{tool} ×{n}" if n > 1 else tool for tool, n in tools.items())
                out.append(f"{path} — {verb} ({counts})")
        return out

    def merge_item(self, item: str) -> None:
        match = FILE_ITEM.match(item)
        if match is None:
            path = item.split(" (", 1)[0].strip()
            self.add(path, "read" if "read" in item[len(path):] and "patch" not in item else "modified", "earlier")
            return
        path, verb, tools = match.groups()
        for part in tools.split(", "):
            counted = _COUNT.match(part)
            self.add(path, verb, counted.group(1) if counted else part, int(counted.group(2)) if counted else 1)


# --- parsing a previous summary ---------------------------------------------------------------

_HEADING = re.compile(r"^(?:#{1,4}\s+(.+?)|(?:\d+\.\s+)?\*{0,2}([A-Z][^:\n]{2,60}?)\*{0,2}:\s*)$")


def _foreign_section(title: str) -> str:
    """Our section for another summariser's heading, by the heading's own words."""
    lowered = title.lower()
    if title in _ALIASES:
        return _ALIASES[title]
    if title in _KNOWN:
        return title
    for words, section in (
        (("error", "fix", "fail", "blocker"), ERRORS),
        (("file",), FILES),
        (("user message", "user request", "messages from the user"), REQUESTS),
        (("decision", "constraint", "preference", "instruction"), DECISIONS),
        (("pending", "next", "remaining", "open", "todo"), OPEN),
        (("current work", "in progress", "current state"), LAST_STEP),
        (("command",), COMMANDS),
        (("action", "done", "completed"), ACTIONS),
    ):
        if any(word in lowered for word in words):
            return section
    return EARLIER


def parse_sections(summary: str) -> dict[str, list[str] | str]:
    """The sections of an earlier handoff - ours, or another agent's mapped by its headings.

    ``Latest user request`` is text; every other section a list of items. Text under no
    heading, or under a heading that maps to nothing, is kept in ``Earlier summary``.
    """
    found = split_summary_text(summary)
    if found is not None:
        summary = found[1]
    for opening, _author in (("This session is being continued", ""), ("Another language model started", "")):
        if summary.lstrip().startswith(opening):
            summary = summary.split("\n", 1)[1] if "\n" in summary else ""
    sections: dict[str, list[str] | str] = {}
    current: str | None = None
    buffer: list[str] = []

    def flush() -> None:
        lines = [line for line in buffer if line.strip()]
        if not lines:
            return
        if current == LATEST:
            sections[LATEST] = "\n".join(buffer).strip("\n")
            return
        target = current or EARLIER
        items = sections.setdefault(target, [])
        assert isinstance(items, list)
        for line in lines:
            stripped = line.strip()
            bullet = re.match(r"^(?:[-*•]|\d+[.)])\s+(.*)$", stripped)
            if bullet:
                items.append(bullet.group(1))
            elif stripped.startswith("(… ") and stripped.endswith("omitted)"):
                continue
            elif items and line[:1] in (" ", "\t"):
                items[-1] += " " + stripped
            else:
                items.append(clip_text(stripped, 1_500) if target == EARLIER else stripped)

    for line in summary.splitlines():
        heading = _HEADING.match(line.strip()) if line.strip() else None
        if heading and (line.startswith("#") or current != LATEST):
            title = (heading.group(1) or heading.group(2) or "").strip().strip("*").strip()
            if title.startswith(FOCUS_PREFIX):
                flush()
                current, buffer = "__focus__", []
                continue
            flush()
            current = title if title == LATEST else _foreign_section(title)
            buffer = []
            continue
        buffer.append(line)
    flush()
    sections.pop("__focus__", None)  # a focus is per compression; its facts live elsewhere
    return sections


# --- assembling under the cap -------------------------------------------------------------------


def merge_items(*groups: Sequence[str]) -> list[str]:
    out: dict[str, None] = {}
    for group in groups:
        merge_into(out, group)
    return list(out)


def merge_into(out: dict[str, None], items: Sequence[str]) -> None:
    """``items`` added to the ordered set ``out`` (``merge_items`` one group at a time)."""
    for item in items:
        item = item.strip()
        if item:
            out.pop(item, None)
            out[item] = None  # a repeated item moves to its newest place

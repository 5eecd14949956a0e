"""The offline summariser: a grounded, structured handoff built from the turns' structure.

No model is involved, and no section is filled by a keyword found somewhere in a text. Each
comes from what the turns are:

* **Latest user request** (verbatim) and **User requests** (every request in order, ≤ 200
  chars each): user turns that are requests - not text an agent injected (``_injected``,
  ``<system-reminder>``, ``<task-notification>``) and not an earlier summary (``_summary``,
  Claude Code's continuation, Codex's handoff, Hermes Agent's compaction prefix).
* **Errors**: failed tool results only (``hermes_plugins._common.failures``: ``_is_error``, exit codes,
  JSON errors, tracebacks), each with its error line and whether a later call of the same command
  or on the same file succeeded (``resolved``) or not (``still failing``).
* **Files**: paths named by write / edit / patch calls (created, modified, with tool and count)
  and by read calls (``hermes_plugins._common.toolkinds``).
* **Commands**: failed shell commands with exit code and error line; successful ones collapsed.
* **Decisions and constraints**: sentences of the user's requests that state a rule or a choice.
* **Open items** (the newest todo list's unfinished items, questions the assistant asked last),
  **Last step before the cut**, **Completed actions** (the §7.2 one-liners, numbered).

Anchored and iterative: a previous summary - ours, or another agent's recognised by metadata or
its opening - is parsed into the same sections (another agent's headings are mapped by their
titles) and every section is merged with the new facts: items deduplicated, the oldest trimmed
first. The whole stays within 8,000 characters; what gets room first is the latest request,
errors still failing, files modified, user decisions, then the rest. A trimmed section says how
many items it left out. Identifiers are copied exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_core.plugin import Config, SummaryRequest, redact
from hermes_plugins.compressor.facts import STOPWORDS, Facts
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR
from hermes_plugins.compressor.plan import TurnDemotions
from hermes_plugins.compressor.prompt import NO_USER_SENTINEL
from hermes_plugins.compressor.sections import (
    ACTIONS,
    COMMANDS,
    DECISIONS,
    EARLIER,
    ERRORS,
    FILE_ITEM,
    FILES,
    FOCUS_PREFIX,
    FOCUS_SHARE,
    LAST_STEP,
    LATEST,
    MAX_CHARS,
    OPEN,
    ORDER,
    REQUEST_ITEM_MAX,
    REQUEST_MAX,
    REQUESTS,
    RESOLVED,
    STATUS,
    STILL_FAILING,
    FileList,
    clip_text,
    merge_into,
    merge_items,
    parse_sections,
    verbatim,
)


def _merge_errors(previous: Sequence[str], failing: Sequence[str], resolved_now: Sequence[str],
                  facts: Facts) -> tuple[list[str], list[str]]:
    """Previous error items re-judged by the new turns, then the new ones."""
    old_failing: list[str] = []
    old_resolved: list[str] = []
    succeeded = facts.succeeded_key_set()  # once: built per item, the merge was quadratic
    for item in previous:
        status = STATUS.search(item)
        body = item[: status.start()] if status else item
        key = body.split(": ", 1)[0].split(" -> exit ", 1)[0]
        key = key.split("] ", 1)[1] if key.startswith("[") and "] " in key else key
        if (status and status.group(1) == RESOLVED) or key in succeeded:
            old_resolved.append(f"{body} — {RESOLVED}")
        elif status:
            old_failing.append(f"{body} — {STILL_FAILING}")
        else:  # another summariser's error item: its status is its own words
            old_resolved.append(body)
    new_bodies = {STATUS.sub("", i) for i in (*failing, *resolved_now)}
    old_failing = [i for i in old_failing if STATUS.sub("", i) not in new_bodies]
    old_resolved = [i for i in old_resolved if STATUS.sub("", i) not in new_bodies]
    return merge_items(old_failing, failing), merge_items(old_resolved, resolved_now)


#: The share of the room left each tier may take in ``_Budget.fill``'s first pass.
_SHARES = {"failing": 0.4, "changed": 0.35, "decisions": 0.3, "requests": 0.0, "commands": 0.25,
           "resolved": 0.3, "open": 0.3, "last": 0.4, "read": 0.3, "earlier": 0.5, "actions": 1.0}


class _Budget:
    """Room-giving by tiers: a tier takes its newest items first, up to a share of what is left
    or all of it; a tier asked again later takes its older items from the room that remains.
    Tiers render under their section's title, in the order they were first offered."""

    def __init__(self, room: int) -> None:
        self.room = room
        self.tiers: dict[str, tuple[str, list[str]]] = {}
        self.lines: dict[str, Callable[[Any], str]] = {}
        self.picked: dict[str, int] = {}
        self.titled: set[str] = set()

    def offer(self, tier: str, title: str, items: Sequence[Any], line: Callable[[Any], str] = str) -> None:
        """``line`` makes an item a line when it is picked (actions are numbers until then)."""
        self.tiers[tier] = (title, list(items))
        self.lines[tier] = line
        self.picked[tier] = 0

    def take(self, tier: str, share: float = 1.0, *, numbered: bool = False) -> None:
        title, items = self.tiers[tier]
        left = len(items) - self.picked[tier]
        if left <= 0:
            return
        allowance = int(self.room * share)
        used = 0 if title in self.titled else len(title) + 5 + 40  # heading, blank line, omission note
        if used >= allowance:
            return
        count = self.picked[tier]
        line = self.lines[tier]
        for index in range(len(items) - count - 1, -1, -1):
            item = items[index]
            if type(item) is not str:
                item = items[index] = line(item)
            cost = len(item) + (7 if numbered else 3)
            if used + cost > allowance:
                break
            used += cost
            count += 1
        if count > self.picked[tier]:
            self.titled.add(title)
            self.picked[tier] = count
            self.room -= used

    def fill(self) -> None:
        """Every tier offered takes its items: first in the priority order, each within a
        share of what is left, so a flood of one kind cannot crowd out the next; then the same
        order takes what remains. (The requests took theirs before: the first pass gives them
        nothing more, the second what remains for any left out.)"""
        for tier, share in _SHARES.items():
            self.take(tier, share, numbered=tier == "actions")
        for tier in _SHARES:
            self.take(tier, numbered=tier == "actions")

    def render(self, title: str, *, numbered: bool = False) -> str:
        chosen: list[str] = []
        omitted = 0
        for tier, (tier_title, items) in self.tiers.items():
            if tier_title != title:
                continue
            count = self.picked[tier]
            omitted += len(items) - count
            chosen.extend(items[len(items) - count:])
        if not chosen:
            return f"## {title}\n({omitted} item{'s' if omitted != 1 else ''} left out for room)\n" if omitted else ""
        lines = [f"## {title}"]
        if omitted:
            lines.append(f"(… {omitted} earlier item{'s' if omitted != 1 else ''} omitted)")
        start = omitted + 1
        for offset, item in enumerate(chosen):
            lines.append(f"{start + offset}. {item}" if numbered else f"- {item}")
        return "\n".join(lines) + "\n"


#: The share of the summary's room the user requests may take before other sections.
REQUEST_SHARE = 0.5
#: The shortened form of an old request: its opening, this long at most.
REQUEST_SHORT = 100
#: A shortened request keeps at least this much of its opening (a word boundary is looked for
#: between this and ``REQUEST_SHORT``).
REQUEST_SHORT_MIN = 84


def _short(item: str) -> str:
    """A request item's opening (``REQUEST_SHORT`` characters at most), cut at a word boundary."""
    if len(item) <= REQUEST_SHORT:
        return item
    cut = item.rfind(" ", REQUEST_SHORT_MIN, REQUEST_SHORT - 1)
    if cut == -1:
        cut = REQUEST_SHORT - 1
    return item[:cut].rstrip() + "…"


def fit_requests(items: Sequence[str], room: int) -> list[str]:
    """``items`` (oldest first) within ``room`` characters of list lines: whole while they fit,
    else the oldest shortened (``_short``) one by one until they do; if even all short forms do
    not fit, the newest that fit (the budget counts the ones left out)."""
    out = list(items)
    cost = sum(len(item) + 3 for item in out) + 60  # heading and omission note
    for index, item in enumerate(out):
        if cost <= room:
            break
        short = _short(item)
        cost -= len(item) - len(short)
        out[index] = short
    return out


def _focus_lines(facts: Facts, topic: str) -> list[str]:
    words = [w for w in re.findall(r"[\w\-./]+", topic.lower()) if len(w) >= 3 and w not in STOPWORDS]
    if not words:
        return []
    found: list[str] = []
    for line in [*map(facts.line, facts.actions), *(t for _k, t in facts.errors), *facts.decisions]:
        if any(w in line.lower() for w in words) and line not in found:
            found.append(line)
    for text in facts.texts:
        for piece in text.splitlines():
            piece = piece.strip()
            if piece and any(w in piece.lower() for w in words):
                clipped = clip_text(piece, 400)
                if clipped not in found:
                    found.append(clipped)
    return found


def split_at_anchor(turns: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """(turns older than the previous summary, turns newer than it); see ``SUMMARY_ANCHOR``."""
    for index, turn in enumerate(turns):
        if turn.get("role") == "system" and turn.get("content") == SUMMARY_ANCHOR:
            return list(turns[:index]), list(turns[index + 1:])
    return [], list(turns)


def build_handoff(
    turns: Sequence[Mapping[str, Any]],
    *,
    previous_summary: str | None = None,
    focus_topic: str | None = None,
    max_chars: int = MAX_CHARS,
    note: str | None = None,
    demotions: TurnDemotions | None = None,
) -> str:
    """The structured handoff for ``turns`` (merged with ``previous_summary``), ≤ ``max_chars``.

    ``demotions``: the results among ``turns`` that the free passes planned to demote (handed
    raw, see ``PrunePlan``); each is read as its one-liner, which is built only where it shows.

    Turns before a ``SUMMARY_ANCHOR`` turn are older than the previous summary (a formerly
    protected head): their facts go before the summary's, the newer turns' after.
    """
    max_chars = max(1_000, int(max_chars))
    # One walk over all the turns, the anchor included: it notes what the turns before the
    # anchor held (requests, summaries), so neither side is read again on its own.
    facts = Facts(turns, demotions)
    previous = _previous_sections(facts, previous_summary)

    def prev(title: str) -> list[str]:
        value = previous.get(title)
        return list(value) if isinstance(value, list) else []

    prev_latest = previous.get(LATEST)
    prev_latest_text = prev_latest if isinstance(prev_latest, str) and prev_latest.strip() \
        and prev_latest.strip() != NO_USER_SENTINEL else None
    latest_full = facts.latest_request  # ``None``: no request after the anchor
    if latest_full is None:
        latest_full = prev_latest_text or facts.older_latest

    # Requests: older turns', then the previous summary's (its latest one included), then new.
    older_requests = facts.older_requests
    previous_requests = prev(REQUESTS) + ([clip_text(prev_latest_text, REQUEST_ITEM_MAX)] if prev_latest_text else [])
    older_set = set(older_requests)
    requests = merge_items(older_requests, previous_requests, [r for r in facts.requests if r not in older_set])
    failing, resolved = facts.error_items()
    failing, resolved = _merge_errors(prev(ERRORS), failing, resolved, facts)
    files, earlier = _merged_files(prev(FILES), prev(EARLIER), facts)

    parts: list[str] = []
    if note:
        parts.append(note.strip() + "\n")
    # The latest request is redacted once for its verbatim form and its item (``latest_item``).
    parts.append(f"## {LATEST}\n{verbatim(facts.redacted(latest_full), REQUEST_MAX) if latest_full else NO_USER_SENTINEL}\n")
    fixed = sum(len(p) + 1 for p in parts)
    budget = _Budget(max(0, max_chars - fixed - 8))
    focus_block = _focus_block(budget, facts, focus_topic)
    latest_item = facts.clip(latest_full, REQUEST_ITEM_MAX) if latest_full else None
    # The person's requests first (issue 29): every one is kept while the budget allows, the
    # oldest shortened to their opening when it is tight; only past that are the oldest left out
    # (counted). The share bounds what they may take; they take only what they need.
    request_room = int(budget.room * REQUEST_SHARE)
    budget.offer("requests", REQUESTS, fit_requests([r for r in requests if r != latest_item], request_room))
    budget.take("requests", REQUEST_SHARE)
    budget.offer("failing", ERRORS, failing)
    budget.offer("changed", FILES, files.items(changed=True))
    budget.offer("decisions", DECISIONS, merge_items(prev(DECISIONS), facts.decisions))
    budget.offer("commands", COMMANDS, merge_items(prev(COMMANDS), facts.command_items()))
    budget.offer("resolved", ERRORS, resolved)
    budget.offer("open", OPEN, merge_items(prev(OPEN), facts.open_items)[-12:])
    budget.offer("last", LAST_STEP, facts.last_step or prev(LAST_STEP))
    budget.offer("read", FILES, files.items(changed=False))
    budget.offer("earlier", EARLIER, earlier)
    budget.offer("actions", ACTIONS, prev(ACTIONS) + facts.actions, facts.line)
    budget.fill()
    if focus_block:
        parts.append(focus_block)
    return _rendered(parts, budget, max_chars)


def _previous_sections(facts: Facts, previous_summary: str | None) -> dict[str, list[str] | str]:
    """The sections of the summaries among the turns and of ``previous_summary``, merged in
    the order they were written (the older turns', the previous one, the newer turns')."""
    older_summaries = facts.summaries[: facts.older_summaries]
    newer_summaries = facts.summaries[facts.older_summaries:]
    # Each section's items merged into one ordered set as the summaries come (copying the
    # merged list for every summary was quadratic: a long session holds hundreds of them).
    previous: dict[str, dict[str, None] | str] = {}
    for text in [*older_summaries, *([previous_summary] if previous_summary else []), *newer_summaries]:
        for title, value in parse_sections(text).items():
            if isinstance(value, str):
                previous[title] = value
                continue
            merged = previous.get(title)
            if not isinstance(merged, dict):
                merged = previous[title] = {}
            merge_into(merged, value)
    return {title: list(value) if isinstance(value, dict) else value for title, value in previous.items()}


def _merged_files(previous: list[str], earlier: list[str], facts: Facts) -> tuple[FileList, list[str]]:
    """The previous summaries' file items with the turns' files; another summariser's prose
    about files goes to ``earlier`` (returned with them)."""
    files = FileList()
    for item in previous:
        if FILE_ITEM.match(item) or re.match(r"^\S+ \((?:[a-z]+, )*[a-z]+\)$", item):
            files.merge_item(item)
        else:  # another summariser's prose about files
            earlier.append(clip_text(item, 600))
    for path, (verb, tools) in facts.files.entries.items():
        for tool, count in tools.items():
            files.add(path, verb, tool, count)
    return files, earlier


def _focus_block(budget: _Budget, facts: Facts, focus_topic: str | None) -> str:
    """The focus section (its items taken from ``budget`` first), or "" without a topic."""
    if not focus_topic or not focus_topic.strip():
        return ""
    title = FOCUS_PREFIX + clip_text(focus_topic, 120)
    focus_items = _focus_lines(facts, focus_topic)
    if focus_items:
        budget.offer("focus", title, focus_items)
        budget.take("focus", FOCUS_SHARE)
        return budget.render(title)
    block = f"## {title}\n(nothing in the condensed turns mentions this topic)\n"
    budget.room -= len(block) + 1
    return block


def _rendered(parts: list[str], budget: _Budget, max_chars: int) -> str:
    """The handoff's text: ``parts``, then the sections in their order, redacted, ≤ ``max_chars``."""
    for title in ORDER:
        block = budget.render(title, numbered=title == ACTIONS)
        if block:
            parts.append(block)
    # The turns are read unredacted (one pass, no copies): what reaches the summary is
    # redacted here, each item on its own line as in the turn it came from.
    text = redact("\n".join(p.rstrip("\n") + "\n" for p in parts if p).strip())
    if len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars - 2)
        text = text[: cut if cut > 0 else max_chars - 2].rstrip() + "\n…"
    return text


class ExtractiveSummarizer:
    """The ``extractive`` summariser: ``build_handoff`` behind the ``Summarizer`` protocol.

    ``reads_raw_turns``: it redacts what it writes, so the engine hands it the condensed
    messages as they are (no redacted copies, no LLM prompt built) - the turns of a
    ``SummaryRequest`` it gets may hold secrets, and its ``prompt`` is empty.
    """

    name = "extractive"
    reads_raw_turns = True
    #: Takes results the free passes planned to demote raw (``PlannedTurns.demotions``).
    reads_planned_demotions = True

    def __init__(self, config: Config | None = None, *, model: str | None = None) -> None:
        self.config = config
        self.model = model

    def summarize(self, request: SummaryRequest) -> str:
        return build_handoff(
            request.turns,
            previous_summary=request.previous_summary,
            focus_topic=request.focus_topic,
            max_chars=min(request.max_chars or MAX_CHARS, MAX_CHARS),
            demotions=getattr(request.turns, "demotions", None),
        )

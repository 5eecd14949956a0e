"""The offline summariser: a deterministic, structured handoff built from the turns themselves.

No model is involved. The handoff quotes the goal and the latest user request verbatim and lists
what happened as facts pulled from the turns: completed actions as the one-line tool summaries
of §7.2, files touched, commands with their exit codes, errors, decisions the user stated and
questions left open. Items are kept whole (paths, ids, error texts and numbers are never cut in
the middle) and dropped oldest-first when the handoff would exceed its size cap.

The same builder is the engine's fallback when a configured LLM summariser fails: it then opens
with a line saying which summariser was unavailable and why.

When a previous summary exists it is updated, not re-summarised: its sections are parsed and the
new facts are appended (action numbering continues), so nothing is paraphrased twice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from hermes_core.config import Config
from hermes_core.summarizer import SummaryRequest
from hermes_plugins.compressor.framing import SUMMARY_ANCHOR
from hermes_plugins.compressor.oneliners import (
    exit_code_of,
    looks_demoted,
    parse_arguments,
    summarize_tool_result,
)
from hermes_plugins.compressor.prompt import NO_USER_SENTINEL
from hermes_plugins.compressor.prune import DUPLICATE_PREFIX

MAX_CHARS = 8_000
REQUEST_MAX = 2_500
GOAL_MAX = 1_200
ITEM_MAX = 300
FOCUS_SHARE = 0.65
MAX_FILES = 40
MAX_DECISIONS = 200
RECENT_TURNS = 6

LATEST = "Latest user request"
GOAL = "Goal"
ACTIONS = "Completed actions"
COMMANDS = "Commands"
FILES = "Files touched"
ERRORS = "Errors and blockers"
DECISIONS = "Decisions"
QUESTIONS = "Open questions (may be stale)"
RECENT = "Last turns before the cut"
EARLIER = "Earlier summary"
FOCUS_PREFIX = "Focus: "
SAME_AS_LATEST = "(same as the latest user request)"
_KNOWN = {LATEST, GOAL, ACTIONS, COMMANDS, FILES, ERRORS, DECISIONS, QUESTIONS, RECENT, EARLIER}
#: Sections filled with facts, in the order they are given room (focus aside).
_LIST_SECTIONS: tuple[tuple[str, float], ...] = (
    (ERRORS, 0.16),
    (ACTIONS, 0.30),
    (FILES, 0.12),
    (COMMANDS, 0.12),
    (DECISIONS, 0.12),
    (QUESTIONS, 0.06),
    (EARLIER, 0.08),
    (RECENT, 0.04),
)

_TERMINAL_TOOLS = frozenset({"terminal", "shell", "bash", "run_command", "execute_command", "exec", "run_shell"})
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "target_file", "output_path", "workdir")
_VERBS = {
    "read_file": "read", "view": "read", "open_file": "read",
    "write_file": "written", "create_file": "written",
    "patch": "patched", "edit_file": "patched", "apply_patch": "patched", "str_replace": "patched",
    "search_files": "searched",
}
_ERROR_WORDS = re.compile(
    r"\b(error|errors|failed|failure|exception|traceback|timed out|timeout|fatal|denied|"
    r"not found|cannot|could not|panic)\b",
    re.IGNORECASE,
)
_DECISION_WORDS = re.compile(
    r"\b(let's|lets|let us|use|don't|do not|never|always|prefer|instead|must|mustn't|should|"
    r"shouldn't|go with|keep|avoid|switch to|decided|decide|we will|we'll|i want|make sure)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_PATH_MENTION = re.compile(
    r"(?<![\w/.\-])(?:~?/|\.{1,2}/)?(?:[\w.\-]+/)*[\w\-]+\.(?:py|pyi|js|mjs|ts|tsx|jsx|go|rs|java|kt|rb|"
    r"php|c|h|cc|cpp|hpp|cs|swift|md|rst|txt|json|yaml|yml|toml|ini|cfg|sh|sql|html|css|scss|"
    r"lock|env|xml|csv)\b"
)
_ONE_LINER_EXIT = re.compile(r"-> exit (-?\d+|\?)")
_STOPWORDS = frozenset({"the", "and", "for", "with", "about", "that", "this", "from", "into", "what"})


def _clip(text: str, limit: int) -> str:
    """``text`` cut at a word boundary within ``limit`` (identifiers are never split)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    if cut < limit // 2:
        cut = limit - 1
    return text[:cut].rstrip() + "…"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def verbatim(text: str, limit: int) -> str:
    """A user's words as they were, or head and tail around an omission note when too long."""
    text = text.strip("\n")
    if len(text) <= limit:
        return text
    head = text[: int(limit * 0.7)]
    tail = text[-int(limit * 0.25):]
    return f"{head}\n[… {len(text) - len(head) - len(tail):,} characters omitted …]\n{tail}"


class _Facts:
    """Everything the handoff lists, pulled from the turns in one pass."""

    def __init__(self, turns: Sequence[Mapping[str, Any]]) -> None:
        self.first_request: str | None = None
        self.latest_request: str | None = None
        self.actions: list[str] = []
        self.commands: list[str] = []
        self.files: dict[str, list[str]] = {}
        self.errors: list[str] = []
        self.decisions: list[str] = []
        self.questions: list[str] = []
        self.recent: list[str] = []
        self.texts: list[str] = []
        self._seen: dict[int, set[str]] = {}
        self._collect(turns)

    def _add_file(self, path: str, verb: str) -> None:
        path = path.strip()
        if not path or len(path) > 300:
            return
        verbs = self.files.setdefault(path, [])
        if verb not in verbs:
            verbs.append(verb)

    def _add(self, bucket: list[str], item: str) -> None:
        item = item.strip()
        seen = self._seen.setdefault(id(bucket), set())
        if item and item not in seen:
            seen.add(item)
            bucket.append(item)

    def _collect(self, turns: Sequence[Mapping[str, Any]]) -> None:
        results: dict[str, str] = {}
        for turn in turns:
            if turn.get("role") == "tool":
                results[str(turn.get("tool_call_id") or "")] = str(turn.get("content") or "")
        assistant_texts: list[str] = []
        with_text: list[Mapping[str, Any]] = []
        for turn in turns:
            role = turn.get("role")
            text = str(turn.get("content") or "")
            if not text.strip():
                if role == "assistant":
                    for call in turn.get("tool_calls") or ():
                        self._scan_call(call, results)
                continue
            with_text.append(turn)
            if role == "user":
                if text.strip() != NO_USER_SENTINEL:
                    if self.first_request is None:
                        self.first_request = text
                    self.latest_request = text
                    self._scan_user(text)
            elif role == "assistant":
                assistant_texts.append(text)
                self._scan_errors(text)
                for call in turn.get("tool_calls") or ():
                    self._scan_call(call, results)
            elif role == "tool":
                if not looks_demoted(text):
                    self._scan_errors(text)
        for text in assistant_texts[-3:]:
            for sentence in _SENTENCE.split(text):
                sentence = sentence.strip()
                if sentence.endswith("?") and len(sentence) > 8:
                    self._add(self.questions, _clip(sentence, ITEM_MAX))
        self.texts = [str(t.get("content")) for t in with_text]
        for text in self.texts:
            if len(self.files) >= MAX_FILES:
                break
            for match in _PATH_MENTION.finditer(text):
                if len(self.files) >= MAX_FILES:
                    break
                if match.group(0) not in self.files:
                    self._add_file(match.group(0), "mentioned")
        for turn in with_text[-RECENT_TURNS:]:
            role = turn.get("role")
            label = "tool result" if role == "tool" else str(role)
            self.recent.append(f"{label}: {_clip(_one_line(str(turn.get('content'))), ITEM_MAX)}")
        # Long histories: keep the newest facts of the unbounded kinds.
        del self.decisions[:-MAX_DECISIONS]

    def _scan_user(self, text: str) -> None:
        for sentence in _SENTENCE.split(text):
            sentence = sentence.strip()
            if 8 <= len(sentence) and _DECISION_WORDS.search(sentence):
                self._add(self.decisions, _clip(sentence, ITEM_MAX))

    def _scan_errors(self, text: str) -> None:
        if not _ERROR_WORDS.search(text):
            return
        for line in text.splitlines():
            if _ERROR_WORDS.search(line):
                self._add(self.errors, _clip(line.strip(), ITEM_MAX))
                if len(self.errors) > 60:
                    del self.errors[0]
                break

    def _scan_call(self, call: Mapping[str, Any], results: Mapping[str, str]) -> None:
        raw = call.get("function")
        fn: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        name = str(fn.get("name") or "unknown")
        arguments = fn.get("arguments")
        args = parse_arguments(arguments)
        ident = str(call.get("id") or call.get("call_id") or "")
        result = results.get(ident)
        if result is not None and looks_demoted(result) and not result.startswith(DUPLICATE_PREFIX) \
                and result.startswith(f"[{name}]"):
            line = result
        else:
            line = summarize_tool_result(name, arguments, result or "")
        self.actions.append(line)
        if name in _TERMINAL_TOOLS:
            command = args.get("command") or args.get("cmd")
            if isinstance(command, str) and command.strip():
                found = _ONE_LINER_EXIT.search(result or "")
                code = found.group(1) if found else exit_code_of(result or "") if result else "?"
                if result is None:
                    code = "no result"
                self.commands.append(f"`{_clip(_one_line(command), 200)}` -> exit {code}")
                if code not in ("0", "?", "no result"):
                    self._add(self.errors, f"`{_clip(_one_line(command), 120)}` exited with {code}")
        if name == "clarify":
            question = args.get("question")
            if isinstance(question, str) and question.strip():
                self._add(self.questions, _clip(_one_line(question), ITEM_MAX))
        verb = _VERBS.get(name, "used")
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str):
                self._add_file(value, verb)
        paths = args.get("paths")
        if isinstance(paths, list):
            for value in paths[:20]:
                if isinstance(value, str):
                    self._add_file(value, verb)


def parse_sections(summary: str) -> dict[str, list[str] | str]:
    """Our sections of an earlier handoff: list sections as items, verbatim ones as text.

    Text before the first known heading, or under unknown headings, is kept whole under
    ``Earlier summary`` (it may come from another summariser).
    """
    sections: dict[str, list[str] | str] = {}
    current: str | None = None
    buffer: list[str] = []
    leftovers: list[str] = []

    def flush() -> None:
        if current is None:
            if any(line.strip() for line in buffer):
                leftovers.append("\n".join(buffer).strip())
            return
        if current in (LATEST, GOAL):
            sections[current] = "\n".join(buffer).strip("\n")
        elif current in _KNOWN:
            items = []
            for line in buffer:
                stripped = line.strip()
                if stripped.startswith("- "):
                    items.append(stripped[2:])
                elif re.match(r"\d+\. ", stripped):
                    items.append(stripped.split(". ", 1)[1])
                elif stripped and items:
                    items[-1] += " " + stripped
                elif stripped:
                    items.append(stripped)
            sections[current] = items
        else:
            leftovers.append(f"## {current}\n" + "\n".join(buffer).strip())

    for line in summary.splitlines():
        if line.startswith("## "):
            title = line[3:].strip()
            if title in _KNOWN or title.startswith(FOCUS_PREFIX):
                flush()
                current = title
                buffer = []
                continue
            if current not in (LATEST, GOAL):
                flush()
                current = title
                buffer = []
                continue
        buffer.append(line)
    flush()
    for key in list(sections):
        if key.startswith(FOCUS_PREFIX):
            del sections[key]  # a focus is per compression; its facts live in the other sections
    if leftovers:
        earlier = sections.get(EARLIER)
        items = list(earlier) if isinstance(earlier, list) else []
        items.extend(_clip(part, 1_500) for part in leftovers if part)
        sections[EARLIER] = items
    return sections


def _take_newest(items: Sequence[str], room: int, numbered_from: int | None = None) -> tuple[list[str], int]:
    """The newest items that fit in ``room`` characters, in their original order."""
    chosen: list[str] = []
    used = 0
    for index in range(len(items) - 1, -1, -1):
        line = items[index]
        rendered = (len(f"{numbered_from + index}. ") if numbered_from is not None else 2) + len(line) + 1
        if used + rendered > room:
            break
        chosen.append(line)
        used += rendered
    chosen.reverse()
    return chosen, len(items) - len(chosen)


def _render_list(title: str, items: Sequence[str], room: int, *, numbered: bool = False) -> str:
    if not items or room <= len(title) + 8:
        return ""
    header = f"## {title}\n"
    chosen, omitted = _take_newest(items, room - len(header) - 40, 1 if numbered else None)
    if not chosen:
        return ""
    start = len(items) - len(chosen) + 1
    lines = []
    if omitted:
        lines.append(f"(… {omitted} earlier item{'s' if omitted != 1 else ''} omitted)")
    for offset, item in enumerate(chosen):
        lines.append(f"{start + offset}. {item}" if numbered else f"- {item}")
    return header + "\n".join(lines) + "\n"


def _focus_lines(facts: _Facts, topic: str) -> list[str]:
    words = [w for w in re.findall(r"[\w\-./]+", topic.lower()) if len(w) >= 3 and w not in _STOPWORDS]
    if not words:
        return []
    found: list[str] = []
    for line in facts.actions + facts.errors + facts.decisions:
        if any(w in line.lower() for w in words) and line not in found:
            found.append(line)
    for text in facts.texts:
        for piece in text.splitlines():
            piece = piece.strip()
            if piece and any(w in piece.lower() for w in words):
                clipped = _clip(piece, 400)
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
) -> str:
    """The structured handoff for ``turns`` (updating ``previous_summary``), ≤ ``max_chars``.

    Turns before a ``SUMMARY_ANCHOR`` turn are older than the previous summary (a formerly
    protected head): their facts go before the summary's, theirs after.
    """
    max_chars = max(1_000, int(max_chars))
    older_turns, newer_turns = split_at_anchor(turns)
    older = _Facts(older_turns)
    facts = _Facts(newer_turns)
    previous = parse_sections(previous_summary) if previous_summary else {}

    def prev_list(title: str) -> list[str]:
        value = previous.get(title)
        return list(value) if isinstance(value, list) else []

    def merged(title: str, *groups: Sequence[str]) -> list[str]:
        out: list[str] = []
        for group in groups:
            for item in group:
                if item not in out:
                    out.append(item)
        return out

    prev_latest = previous.get(LATEST)
    latest = facts.latest_request or (prev_latest if isinstance(prev_latest, str) and prev_latest else None) \
        or older.latest_request
    prev_goal = previous.get(GOAL)
    goal = older.first_request or (prev_goal if isinstance(prev_goal, str) and prev_goal else None) \
        or facts.first_request

    parts: list[str] = []
    if note:
        parts.append(note.strip() + "\n")
    parts.append(f"## {LATEST}\n{verbatim(latest, REQUEST_MAX) if latest else NO_USER_SENTINEL}\n")
    if goal and goal != latest and goal != SAME_AS_LATEST:
        parts.append(f"## {GOAL}\n{verbatim(goal, GOAL_MAX)}\n")
    elif goal:
        parts.append(f"## {GOAL}\n{SAME_AS_LATEST}\n")
    fixed = sum(len(p) + 1 for p in parts)

    room = max(0, max_chars - fixed)
    if focus_topic and focus_topic.strip():
        title = FOCUS_PREFIX + _clip(_one_line(focus_topic), 120)
        focus_items = merged("", _focus_lines(older, focus_topic), _focus_lines(facts, focus_topic))
        block = _render_list(title, focus_items, int(room * FOCUS_SHARE)) if focus_items else (
            f"## {title}\n(nothing in the condensed turns mentions this topic)\n"
        )
        parts.append(block)
        room = max(0, room - len(block) - 1)

    def files_of(f: _Facts) -> list[str]:
        return [f"{path} ({', '.join(verbs)})" for path, verbs in f.files.items()]

    lists: dict[str, list[str]] = {
        ERRORS: merged(ERRORS, older.errors, prev_list(ERRORS), facts.errors),
        # Repeated actions are real (the same test run twice): no de-duplication.
        ACTIONS: older.actions + prev_list(ACTIONS) + facts.actions,
        FILES: _merge_files(_merge_files(files_of(older), prev_list(FILES)), files_of(facts)),
        COMMANDS: older.commands + prev_list(COMMANDS) + facts.commands,
        DECISIONS: merged(DECISIONS, older.decisions, prev_list(DECISIONS), facts.decisions),
        QUESTIONS: merged(QUESTIONS, prev_list(QUESTIONS), facts.questions)[-8:],
        EARLIER: prev_list(EARLIER),
        RECENT: facts.recent or older.recent,
    }
    total_share = sum(share for title, share in _LIST_SECTIONS if lists[title])
    carry = 0
    rendered: dict[str, str] = {}
    for title, share in _LIST_SECTIONS:
        items = lists[title]
        if not items:
            continue
        allowance = int(room * share / total_share) + carry if total_share else 0
        block = _render_list(title, items, allowance, numbered=title == ACTIONS)
        rendered[title] = block
        carry = max(0, allowance - len(block) - 1)
    order = (ACTIONS, COMMANDS, FILES, ERRORS, DECISIONS, QUESTIONS, EARLIER, RECENT)
    parts.extend(rendered[title] for title in order if rendered.get(title))
    text = "\n".join(p.rstrip("\n") + "\n" for p in parts if p).strip()
    if len(text) > max_chars:
        cut = text.rfind("\n", 0, max_chars - 2)
        text = text[: cut if cut > 0 else max_chars - 2].rstrip() + "\n…"
    return text


def _merge_files(previous: Sequence[str], new: Sequence[str]) -> list[str]:
    out = list(previous)
    seen = {item.split(" (", 1)[0] for item in out}
    for item in new:
        path = item.split(" (", 1)[0]
        if path in seen:
            for k, existing in enumerate(out):
                if existing.split(" (", 1)[0] == path:
                    out[k] = item if len(item) > len(existing) else existing
                    break
            continue
        seen.add(path)
        out.append(item)
    return out


class ExtractiveSummarizer:
    """The ``extractive`` summariser: ``build_handoff`` behind the ``Summarizer`` protocol."""

    name = "extractive"

    def __init__(self, config: Config | None = None, *, model: str | None = None) -> None:
        self.config = config
        self.model = model

    def summarize(self, request: SummaryRequest) -> str:
        return build_handoff(
            request.turns,
            previous_summary=request.previous_summary,
            focus_topic=request.focus_topic,
            max_chars=min(request.max_chars or MAX_CHARS, MAX_CHARS),
        )

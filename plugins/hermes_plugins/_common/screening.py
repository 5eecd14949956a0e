"""What happens to prompt text the scanners flag (``hermes_context_scan``, spec §9.4 and §12).

Scanners say what they found; these helpers decide. ``LOW_SEVERITY`` ids only warn, every other
id blocks: a context file loses only the offending lines (``screen_file``), a memory entry
becomes a placeholder, SOUL.md loads with a warning; ``threat_scan.allow`` accepts findings per
project. Every decision is a log event and a warning (docs/hostile-input.md).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hermes_core.plugin import record_warning

HIGH = "high"
LOW = "low"
#: Finding ids that warn and never block (the built-in scanner's; see its docstring).
LOW_SEVERITY = frozenset({"scoped_override", "hidden_comment_note", "joiner_characters",
                          "credential_in_header", "known_installer", "tool_markup_mention",
                          "link_mention", "mixed_script"})
#: The family of each built-in finding id, for warnings and ``hermes-ctx scan``; an id a
#: third-party scanner reports is its own family.
FAMILIES: Mapping[str, str] = {
    **dict.fromkeys(("prompt_injection", "rule_override", "scoped_override", "system_override",
                     "role_hijack", "execute_translation"), "override"),
    "fake_authority": "authority",
    **dict.fromkeys(("remote_script_execution", "known_installer"), "fetch_execute"),
    **dict.fromkeys(("secret_exfiltration", "env_exfiltration", "credential_exfiltration",
                     "credential_access", "secret_file_read", "credential_in_header",
                     "ssh_key_access", "credential_files", "prompt_extraction", "chat_exfiltration",
                     "image_exfiltration"),
                    "exfiltration"),
    "persistence": "persistence",
    **dict.fromkeys(("dangerous_link", "link_mention"), "link_scheme"),
    **dict.fromkeys(("chat_template_token", "tool_call_forgery", "tool_markup_mention",
                     "forged_turn", "forged_dialogue", "forged_tool_result"), "tool_forgery"),
    **dict.fromkeys(("hidden_comment_instruction", "hidden_comment_directive", "hidden_comment_note", "hidden_html",
                     "invisible_characters", "joiner_characters", "encoded_payload",
                     "mixed_script"), "hidden"),
}
#: A file with more than this share of its non-blank lines blocked is mostly attack: it is
#: replaced whole (what is left of it would be the attacker's framing).
MOSTLY_ATTACK = 0.5


def severity(finding: str) -> str:
    """``"low"`` for the ids in ``LOW_SEVERITY``, ``"high"`` for every other (unknown ids from
    third-party scanners included: a scanner that reports something means it)."""
    return LOW if finding in LOW_SEVERITY else HIGH


def family(finding: str) -> str:
    """The family of a finding id (``FAMILIES``), or the id itself when it is not a built-in."""
    return FAMILIES.get(finding, finding)


def describe(finding: str) -> str:
    """``"prompt_injection (override, high)"``: an id with its family and severity."""
    return f"{finding} ({family(finding)}, {severity(finding)})"


@attrs.frozen(kw_only=True)
class Screened:
    """A context file after screening: the text for the prompt and what was done to it."""

    text: str
    #: ``{"line": n, "findings": [...], "text": original}`` per line replaced by a marker.
    blocked_lines: tuple[Mapping[str, Any], ...] = ()
    #: High findings that blocked the whole file (they span lines), else ``()``.
    blocked_file: tuple[str, ...] = ()
    #: Low findings, warned about and kept.
    flagged: tuple[str, ...] = ()
    #: Findings the project's allowlist accepted.
    allowed: tuple[str, ...] = ()


def allow_entries(config: Any, path: str | Path | None) -> tuple[str, ...]:
    """The ``threat_scan.allow`` entries that apply to ``path`` (finding ids or line texts).

    Keys are project directories (``~`` expanded; a file under one matches), globs matched
    against the file's path, or ``"*"`` for every project.
    """
    section = getattr(config, "threat_scan", None)
    allow = getattr(section, "allow", None) if section is not None else None
    if not allow:
        return ()
    target = Path(path).expanduser() if path else None
    entries: list[str] = []
    for key, values in allow.items():
        if key != "*":
            if target is None:
                continue
            root = Path(key).expanduser()
            if not (target == root or root in target.parents or fnmatch.fnmatch(str(target), str(root))):
                continue
        entries.extend(values)
    return tuple(entries)


def _line_marker(label: str, numbers: Sequence[int], ids: Sequence[str]) -> str:
    where = f"line {numbers[0]}" if len(numbers) == 1 else f"lines {numbers[0]}-{numbers[-1]}"
    return f"[BLOCKED: {where} of {label} matched prompt-injection pattern(s) {', '.join(ids)}; removed]"


#: How many multi-line spans one file may have narrowed before it is blocked whole instead.
MAX_SPANS = 32


def _cut(lines: Sequence[str], cuts: dict[int, tuple[list[int], list[str]]], cut_rows: set[int],
         label: str) -> tuple[list[str], list[dict[str, Any]]]:
    """``(the lines kept, each cut run replaced by its marker; one record per line cut)``."""
    blocked: list[dict[str, Any]] = []
    out_lines: list[str] = []
    for index, line in enumerate(lines):
        if index in cuts:
            rows, hits = cuts[index]
            out_lines.append(_line_marker(label, [r + 1 for r in rows], hits))
            blocked.extend({"line": r + 1, "findings": hits, "text": lines[r],
                            "families": sorted({family(h) for h in hits})} for r in rows)
        elif index not in cut_rows:
            out_lines.append(line)
    return out_lines, blocked


def screen_file(ctx: Any, text: str, label: str, *, path: str | None = None) -> Screened:
    """Screen one project context file (docs/hostile-input.md).

    Each line is scanned on its own, so an attack on a line next to a blocked one is found
    by itself. A high finding that no single line shows (an instruction inside a multi-line
    HTML comment) is narrowed to the shortest run of lines that shows it, and that run is
    cut. The whole file goes only when more than half of its non-blank lines are cut.
    """
    found = findings(ctx, text, label)
    if not found:
        return Screened(text=text)
    allowed_entries = allow_entries(getattr(ctx, "config", None), path)
    allowed = tuple(i for i in found if i in allowed_entries)
    literals = tuple(e for e in allowed_entries if e not in found)
    high = [i for i in found if severity(i) == HIGH and i not in allowed]
    low = tuple(i for i in found if severity(i) == LOW and i not in allowed)
    lines = text.split("\n")
    #: first line index of a cut run -> (its line indices, its findings)
    cuts: dict[int, tuple[list[int], list[str]]] = {}
    pinned: set[str] = set()
    if high:
        for index, line in enumerate(lines):
            hits = [i for i in findings(ctx, line, label) if i in high] if line.strip() else []
            if hits and any(literal and literal in line for literal in literals):
                pinned.update(hits)  # a line the project allows, whatever it matches
                hits = []
            if hits:
                pinned.update(hits)
                cuts[index] = ([index], hits)
    unpinned = [i for i in high if i not in pinned]
    for _ in range(MAX_SPANS):
        if not unpinned:
            break
        span = _narrowest(ctx, lines, label, unpinned, cuts)
        if span is None:
            break
        rows, hits = span
        if rows and not any(literal and literal in lines[r] for r in rows for literal in literals):
            cuts[rows[0]] = (rows, hits)
        pinned.update(hits)  # cut now, allowed, or inside lines already cut
        unpinned = [i for i in unpinned if i not in pinned]
    cut_rows = {r for rows, _hits in cuts.values() for r in rows}
    non_blank = sum(1 for line in lines if line.strip())
    if unpinned or (len(cut_rows) >= 2 and len(cut_rows) > MOSTLY_ATTACK * non_blank):
        placeholder = blocked_file(label, tuple(high), path=path)
        return Screened(text=placeholder, blocked_file=tuple(high), flagged=low, allowed=allowed)
    out_lines, blocked = _cut(lines, cuts, cut_rows, label)
    if blocked:
        record_warning(
            "context_lines_blocked",
            f"{label}: {len(blocked)} line(s) left out of the prompt for potential prompt "
            "injection: " + "; ".join(
                f"line {b['line']} ({', '.join(describe(i) for i in b['findings'])})" for b in blocked),
            path=path, findings=sorted(pinned), lines=[b["line"] for b in blocked],
            families=sorted({family(i) for i in pinned}), severity=HIGH, plugin="context_files",
        )
    if low:
        record_warning(
            "context_file_flagged",
            f"{label} was loaded; it contains text that resembles prompt injection "
            f"({', '.join(describe(i) for i in low)}) - check it if you did not write it, or "
            "allow it in threat_scan.allow",
            path=path, findings=list(low), families=sorted({family(i) for i in low}),
            severity=LOW, plugin="context_files",
        )
    new_text = "\n".join(out_lines) if blocked else text
    return Screened(text=new_text, blocked_lines=tuple(blocked), flagged=low, allowed=allowed)


def _narrowest(ctx: Any, lines: Sequence[str], label: str, wanted: Sequence[str],
               cuts: Mapping[int, tuple[list[int], list[str]]]) -> tuple[list[int], list[str]] | None:
    """The shortest run of lines that shows one of ``wanted`` (its lines not cut yet, and the
    findings it shows), found by two binary searches: the first end at which the text up to it shows a finding, then the
    last start from which the text up to that end still shows it. Scanners must flag any text
    that contains a passage they flag (the hook's contract), which makes both searches exact."""
    cut = {r for rows, _hits in cuts.values() for r in rows}

    def shows(start: int, end: int) -> list[str]:
        return [i for i in findings(ctx, "\n".join(lines[start:end]), label) if i in wanted]

    if not shows(0, len(lines)):
        return None
    low, high = 1, len(lines)
    while low < high:
        middle = (low + high) // 2
        if shows(0, middle):
            high = middle
        else:
            low = middle + 1
    end = low
    first, last = 0, end - 1
    while first < last:
        middle = (first + last + 1) // 2
        if shows(middle, end):
            first = middle
        else:
            last = middle - 1
    rows = [r for r in range(first, end) if r not in cut and lines[r].strip()]
    return rows, shows(first, end)


def report(ctx: Any, text: str, label: str, *, path: str | None = None) -> list[dict[str, Any]]:
    """What the screening of one context file finds, one row per finding and line, for
    ``hermes-ctx scan``: ``{"line", "finding", "family", "severity", "action", "text"}``.

    ``action`` is what the prompt build does: ``"cut"`` (the line is replaced by a marker),
    ``"file"`` (the whole file is replaced), ``"warn"`` (kept, with a warning) or
    ``"allowed"`` (``threat_scan.allow`` accepts it). ``line`` is ``None`` for a finding no
    single line or run of lines shows.
    """
    screened = screen_file(ctx, text, label, path=path)
    lines = text.split("\n")
    rows: list[dict[str, Any]] = []

    def row(number: int | None, finding: str, action: str) -> dict[str, Any]:
        return {"line": number, "finding": finding, "family": family(finding),
                "severity": severity(finding), "action": action,
                "text": lines[number - 1] if number else ""}

    def per_line(ids: Sequence[str], action: str) -> None:
        wanted = set(ids)
        seen: set[str] = set()
        for number, line in enumerate(lines, start=1):
            hits = [i for i in findings(ctx, line, label) if i in wanted] if line.strip() else []
            rows.extend(row(number, i, action) for i in hits)
            seen.update(hits)
        rows.extend(row(None, i, action) for i in ids if i not in seen)

    if screened.blocked_file:
        per_line(screened.blocked_file, "file")
    for blocked in screened.blocked_lines:
        rows.extend(row(int(blocked["line"]), i, "cut") for i in blocked["findings"])
    if screened.flagged:
        per_line(screened.flagged, "warn")
    if screened.allowed:
        per_line(screened.allowed, "allowed")
    return sorted(rows, key=lambda r: (r["line"] or 0, r["finding"]))


def findings(ctx: Any, text: str, source: str, scope: str = "context") -> tuple[str, ...]:
    """The scanners' findings for ``text`` (``()`` when clean or when ``ctx`` has no host)."""
    host = getattr(ctx, "host", None)
    if host is None or not text:
        return ()
    return tuple(host.scan_content(text, source=source, scope=scope))


def blocked_file(source: str, ids: tuple[str, ...], *, path: str | None = None) -> str:
    """The placeholder for a context file with findings, after warning about it."""
    listed = ", ".join(ids)
    record_warning(
        "context_file_blocked",
        f"{source} was not loaded into the prompt: it contains potential prompt injection "
        f"({listed})",
        path=path, findings=list(ids), plugin="context_files",
    )
    return f"[BLOCKED: {source} contained potential prompt injection ({listed}). Content not loaded.]"


def blocked_entry(source: str, ids: tuple[str, ...], *, path: str | None = None) -> str:
    """The placeholder for a memory entry with findings, after warning about it."""
    listed = ", ".join(ids)
    record_warning(
        "memory_entry_blocked",
        f"an entry of {source} was left out of the prompt: threat pattern(s) {listed}",
        path=path, findings=list(ids), plugin="memory",
    )
    return (
        f"[BLOCKED: {source} entry contained threat pattern(s): {listed}. It was not loaded; "
        "if it is not a note you meant to keep, remove it with memory(action=remove).]"
    )


def flagged_soul(ids: tuple[str, ...], *, path: str | None = None) -> None:
    """Warn that the user's SOUL.md has findings; it is loaded all the same (it is theirs)."""
    record_warning(
        "soul_flagged",
        f"SOUL.md matches prompt-injection patterns ({', '.join(ids)}); it was loaded because "
        "it is your own file - check it if you did not write that",
        path=path, findings=list(ids), plugin="identity",
    )

"""What happens to prompt text the scanners flag (``hermes_context_scan``, spec §9.4 and §12).

The scanners only say what they found; these helpers decide, with judgement. Each finding has a
severity: ``LOW_SEVERITY`` ids (shapes ordinary docs contain too: a scoped "ignore the previous
rules about ...", an editor's note in an HTML comment, emoji joiners, a credential sent in a
request header) only warn; every other id - explicit overrides aimed at the agent, hidden-text
tricks carrying instructions, exfiltration, and any id a third-party scanner reports - blocks.
A project context file loses only its offending lines, each replaced by a marker naming the
patterns and the line (``screen_file``); when a finding spans lines no single line shows, the
whole file is replaced as before. A memory entry is replaced by a placeholder that tells the
model how to remove it, and SOUL.md - the user's own file in HERMES_HOME - loads with a
warning. ``threat_scan.allow`` in config accepts findings or lines per project. Every decision
is a log event and a host warning naming the file, the lines and the findings.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from hermes_core.diagnostics import record_warning

HIGH = "high"
LOW = "low"
#: Finding ids that warn and never block (the built-in scanner's; see its docstring).
LOW_SEVERITY = frozenset({"scoped_override", "hidden_comment_note", "joiner_characters",
                          "credential_in_header", "known_installer", "tool_markup_mention",
                          "mixed_script"})
#: The family of each built-in finding id, for warnings and ``hermes-ctx scan``; an id a
#: third-party scanner reports is its own family.
FAMILIES: Mapping[str, str] = {
    **dict.fromkeys(("prompt_injection", "rule_override", "scoped_override", "system_override",
                     "role_hijack", "execute_translation"), "override"),
    "fake_authority": "authority",
    **dict.fromkeys(("remote_script_execution", "known_installer"), "fetch_execute"),
    **dict.fromkeys(("secret_exfiltration", "env_exfiltration", "credential_exfiltration",
                     "credential_access", "secret_file_read", "credential_in_header",
                     "ssh_key_access", "credential_files"), "exfiltration"),
    "persistence": "persistence",
    "dangerous_link": "link_scheme",
    **dict.fromkeys(("chat_template_token", "tool_call_forgery", "tool_markup_mention"),
                    "tool_forgery"),
    **dict.fromkeys(("hidden_comment_instruction", "hidden_comment_note", "hidden_html",
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


def _line_marker(label: str, number: int, ids: Sequence[str]) -> str:
    return f"[BLOCKED: line {number} of {label} matched prompt-injection pattern(s) {', '.join(ids)}; removed]"


def screen_file(ctx: Any, text: str, label: str, *, path: str | None = None) -> Screened:
    """Screen one project context file (see the module docstring)."""
    found = findings(ctx, text, label)
    if not found:
        return Screened(text=text)
    allowed_entries = allow_entries(getattr(ctx, "config", None), path)
    allowed = tuple(i for i in found if i in allowed_entries)
    literals = tuple(e for e in allowed_entries if e not in found)
    high = [i for i in found if severity(i) == HIGH and i not in allowed]
    low = tuple(i for i in found if severity(i) == LOW and i not in allowed)
    blocked: list[dict[str, Any]] = []
    out_lines: list[str] = []
    pinned: set[str] = set()
    if high:
        for number, line in enumerate(text.split("\n"), start=1):
            hits = [i for i in findings(ctx, line, label) if i in high] if line.strip() else []
            if hits and any(literal and literal in line for literal in literals):
                pinned.update(hits)  # a line the project allows, whatever it matches
                hits = []
            if hits:
                pinned.update(hits)
                blocked.append({"line": number, "findings": hits, "text": line})
                out_lines.append(_line_marker(label, number, hits))
            else:
                out_lines.append(line)
    unpinned = tuple(i for i in high if i not in pinned)
    if unpinned:  # a match across lines (a multi-line comment): no line can be cut alone
        placeholder = blocked_file(label, tuple(high), path=path)
        return Screened(text=placeholder, blocked_file=tuple(high), flagged=low, allowed=allowed)
    if blocked:
        record_warning(
            "context_lines_blocked",
            f"{label}: {len(blocked)} line(s) left out of the prompt for potential prompt "
            "injection: " + "; ".join(f"line {b['line']} ({', '.join(b['findings'])})" for b in blocked),
            path=path, findings=sorted(pinned), lines=[b["line"] for b in blocked],
            plugin="context_files",
        )
    if low:
        record_warning(
            "context_file_flagged",
            f"{label} was loaded; it contains text that resembles prompt injection "
            f"({', '.join(low)}) - check it if you did not write it, or allow it in "
            "threat_scan.allow",
            path=path, findings=list(low), plugin="context_files",
        )
    new_text = "\n".join(out_lines) if blocked else text
    return Screened(text=new_text, blocked_lines=tuple(blocked), flagged=low, allowed=allowed)


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

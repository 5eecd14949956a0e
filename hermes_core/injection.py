"""What happens to prompt text the scanners flag (``hermes_context_scan``, spec §9.4 and §12).

The scanners only say what they found; these helpers decide: a project context file is
replaced whole by a one-line placeholder (the original never reaches the prompt), a memory
entry by a placeholder that tells the model how to remove it, and SOUL.md - the user's own
file in HERMES_HOME - loads with a warning. Every decision is a structlog event and a host
warning naming the file and the findings.
"""

from __future__ import annotations

from typing import Any

from hermes_core.diagnostics import record_warning


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

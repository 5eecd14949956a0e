"""The memory snapshot: ``$HERMES_HOME/memories/MEMORY.md`` and ``USER.md`` (spec §12).

The files are read when the prompt is built and the rendered blocks become part of that
prompt; the Session replays the prompt for the rest of the session, so memory written
mid-session lands on disk at once but reaches the prompt only at the next build (after a
compression, or in the next session). That is the "frozen snapshot": durable writes, a prompt
that never moves under the provider's prefix cache.

Entries are separated by a line holding only ``§``; limits count characters, not tokens.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from hermes_core.plugin import (
    ConfigSection,
    PromptBlock,
    PromptContext,
    boolean,
    field,
    hookimpl,
    integer,
    max_read_bytes,
    read_text_bounded,
    record_warning,
)
from hermes_plugins._common.screening import HIGH, LOW, blocked_entry, describe, findings, severity
from hermes_plugins._common.truncation import part_sizes

ENTRY_SEPARATOR = "\n§\n"
RULE = "═" * 46
MIN_RENDER_CAP = 4000
MAX_FILE_BYTES = 2_000_000

MEMORY_FILE = "MEMORY.md"
USER_FILE = "USER.md"
MEMORY_TITLE = "MEMORY (your personal notes)"
USER_TITLE = "USER PROFILE (who the user is)"


def memory_dir(home: Path) -> Path:
    return home / "memories"


def read_entries(path: Path, max_bytes: int = MAX_FILE_BYTES) -> list[str]:
    """The file's entries: split on the separator, stripped, empties dropped, first copy kept.

    The read is bounded (``hermes_core.files.read_text_bounded``): a FIFO, device or socket
    named like a memory file is left out with one warning naming it, and a file over
    ``max_bytes`` is cut with a warning and a marker entry saying so. NUL bytes are kept: the
    model writes the entries, and one odd character must not cost the whole store.
    """
    text = read_text_bounded(
        path, max_bytes, "a memory file", plugin="memory", refuse_binary=False,
        # The cut lands in the prompt as an entry of its own, so the model knows too.
        marker_sep=ENTRY_SEPARATOR, skipped="its entries are left out of the prompt",
    )
    if text is None:
        return []
    text = text.replace("\r\n", "\n")
    entries = (entry.strip() for entry in text.split(ENTRY_SEPARATOR))
    return list(dict.fromkeys(entry for entry in entries if entry))


def render_block(title: str, entries: list[str], limit: int, *, path: Path | None = None) -> str:
    """``RULE / header / RULE / content``; ``""`` for no entries (spec §12 format)."""
    if not entries:
        return ""
    content = ENTRY_SEPARATOR.join(entries)
    used = len(content)
    pct = min(100, int(used / limit * 100)) if limit > 0 else 0
    over = " ⚠ OVER BUDGET" if used > limit else ""
    header = f"{title} [{pct}% — {used:,}/{limit:,} chars{over}]"
    cap = max(2 * limit, MIN_RENDER_CAP)
    if used > cap:
        head, tail = part_sizes(cap)
        omitted = used - head - tail
        content = (
            content[:head]
            + f"\n\n[... {omitted:,} characters of this store omitted here; it is far over its "
            "budget - consolidate or remove entries with the memory tool ...]\n\n"
            + content[-tail:]
        )
        # A file cut at the read already has its warning (naming it, saying it is too large):
        # one problem, one warning; the prompt carries both markers.
        if not (path is not None and entries[-1].startswith(f"[... truncated: {path} ")):
            store = f"{path} ({title.split(' ')[0]} store)" if path else f"{title.split(' ')[0]} store"
            record_warning(
                "memory_truncated",
                f"{store} is {used:,} chars, over the render cap of {cap:,}; "
                f"{omitted:,} chars in the middle were left out of the prompt",
                plugin="memory",
                path=str(path) if path else None,
            )
    return f"{RULE}\n{header}\n{RULE}\n{content}"


def _scanned(ctx: PromptContext, entry: str, filename: str, path: Path) -> str:
    """The entry, or a placeholder when the strict scan finds a high-severity threat in it; the
    file on disk keeps the entry (the memory tool shows and removes it). Low findings (shapes
    ordinary notes contain too, as in context files) keep the entry, with a warning."""
    ids = findings(ctx, entry, filename, scope="strict")
    high = tuple(i for i in ids if severity(i) == HIGH)
    if high:
        return blocked_entry(filename, high, path=str(path))
    if ids:
        record_warning(
            "memory_entry_flagged",
            f"an entry of {filename} was loaded; it resembles prompt injection "
            f"({', '.join(describe(i) for i in ids)}) - remove it with memory(action=remove) if you "
            "did not mean to keep it",
            path=str(path), findings=list(ids), severity=LOW, plugin="memory",
        )
    return entry


@attrs.frozen(kw_only=True)
class MemorySection:
    memory_enabled: bool = field(True, boolean)
    user_profile_enabled: bool = field(True, boolean)
    memory_char_limit: int = field(2200, integer(1))
    user_char_limit: int = field(1375, integer(1))


MEMORY = ConfigSection(name="memory", model=MemorySection, doc="MEMORY.md and USER.md in the prompt.")


@hookimpl
def hermes_config_sections() -> ConfigSection[MemorySection]:
    return MEMORY


@hookimpl(trylast=True)
def hermes_prompt_memory(ctx: PromptContext) -> list[PromptBlock]:
    settings = ctx.config.section(MEMORY)
    folder = memory_dir(ctx.home)
    blocks: list[PromptBlock] = []
    for enabled, block, filename, title, limit in (
        (settings.memory_enabled, "memory", MEMORY_FILE, MEMORY_TITLE, settings.memory_char_limit),
        (settings.user_profile_enabled, "user_profile", USER_FILE, USER_TITLE, settings.user_char_limit),
    ):
        if not enabled:
            continue
        path = folder / filename
        entries = read_entries(path, min(MAX_FILE_BYTES, max_read_bytes(ctx.config)))
        # One scan of the whole store; entries are scanned one by one only when it finds
        # something (a clean store - the usual case - costs one hook call, not one per entry).
        if findings(ctx, ENTRY_SEPARATOR.join(entries), filename, scope="strict"):
            entries = [_scanned(ctx, entry, filename, path) for entry in entries]
        text = render_block(title, entries, limit, path=path)
        if text:
            blocks.append(PromptBlock(name=block, text=text, source=str(path)))
    return blocks

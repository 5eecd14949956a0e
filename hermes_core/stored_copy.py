"""The copy of a system prompt that goes to the session store: users' secrets masked.

The live prompt keeps files as the user wrote them; the store outlives the session, so blocks
read from users' files (every block with a ``source``) are masked with ``hermes_core.redaction``
and a warning names each file. A masked copy is never replayed: the Session rebuilds instead
(from unchanged files, the same bytes).
"""

from __future__ import annotations

import attrs

from hermes_core.assembler import BuiltPrompt
from hermes_core.diagnostics import record_warning
from hermes_core.redaction import MASK, redact


@attrs.frozen(kw_only=True)
class StoredCopy:
    text: str
    #: Length of the stable prefix in ``text`` (0 when unknown).
    static_prefix: int
    #: (source, plugin, how many values were masked) per file that held secrets.
    masked: tuple[tuple[str, str | None, int], ...] = ()


def was_masked(stored: str) -> bool:
    """Whether a stored prompt had secrets masked (so it must be rebuilt, not replayed)."""
    return MASK in stored


def stored_copy(built: BuiltPrompt | None, prompt: str, prefix: str) -> StoredCopy:
    """``prompt`` with the secrets of every file-backed block of ``built`` masked."""
    if built is None or not prompt:
        return StoredCopy(text=prompt, static_prefix=len(prefix))
    text = prompt
    masked: list[tuple[str, str | None, int]] = []
    for _name, _layer, plugin, block, source in built._parts:  # noqa: SLF001 - same package
        if not source or not block:
            continue
        clean = redact(block)
        if clean == block:
            continue
        count = max(1, clean.count(MASK) - block.count(MASK))
        masked.append((source, plugin, count))
        if block in text:
            text = text.replace(block, clean)
            prefix = prefix.replace(block, clean)
        else:  # a block the assembler reshaped: mask the whole prompt rather than miss it
            text = redact(text)
            prefix = redact(prefix)
    static = len(prefix) if prefix and text.startswith(prefix) else 0
    return StoredCopy(text=text, static_prefix=static, masked=tuple(masked))


def warn_masked(copy: StoredCopy, *, where: str) -> None:
    """One warning per file whose secrets were masked in the stored copy."""
    for source, plugin, count in copy.masked:
        record_warning(
            "secrets_in_prompt_file",
            f"{source} holds {count} value(s) that look like secrets (keys, tokens, passwords); "
            f"the live prompt keeps them as written, the copy stored in {where} has them masked "
            "- consider moving them out of the file",
            plugin=plugin, path=source, count=count,
        )

"""The identity block: ``$HERMES_HOME/SOUL.md``, else hermes-core's default identity.

SOUL.md is read from HERMES_HOME only (a SOUL.md in the working directory is ignored), once per
prompt build; when it is the identity, the context-file block never loads it again.
"""

from __future__ import annotations

from hermes_core import PromptBlock, PromptContext, hookimpl, record_warning
from hermes_core.files import (
    FileRefused,
    dangling_target,
    decode_prefix,
    max_read_bytes,
    read_bytes_bounded,
    truncation_marker,
)
from hermes_core.injection import findings, flagged_soul

DEFAULT_IDENTITY = (
    "You are Hermes, an AI agent that works with tools on the user's behalf. Match the length "
    "of your answer to what was asked: short questions get short answers, and depth is spent "
    "only where it earns its place. Skip filler and do not narrate tool calls the user can "
    "already see. When you are unsure, say so and say what would settle it; when the user is "
    "wrong, say that too, plainly and kindly. Prefer doing the work over describing it."
)

SOUL_MAX_BYTES = 500_000


def read_soul(ctx: PromptContext) -> tuple[str | None, str]:
    """Return (text, path) of SOUL.md; text is None when absent, empty or unreadable."""
    path = ctx.home / "SOUL.md"
    limit = min(SOUL_MAX_BYTES, max_read_bytes(ctx.config))
    try:
        read = read_bytes_bounded(path, limit)
    except (FileNotFoundError, NotADirectoryError):
        target = dangling_target(path)
        if target is not None:
            record_warning(
                "soul_unreadable",
                f"{path} is a symlink to {target}, which does not exist; using the default identity",
                path=str(path), plugin="identity",
            )
        return None, str(path)
    except FileRefused as exc:
        record_warning(
            "soul_unreadable",
            f"{path} is {exc.what_it_is}, not a regular file; using the default identity",
            path=str(path), plugin="identity",
        )
        return None, str(path)
    except OSError as exc:
        record_warning(
            "soul_unreadable", f"cannot read {path}: {exc.strerror or exc}; using the default identity",
            path=str(path), plugin="identity",
        )
        return None, str(path)
    data = read.data
    if b"\x00" in data:
        record_warning(
            "soul_unreadable", f"{path} looks binary (NUL bytes); using the default identity",
            path=str(path), plugin="identity",
        )
        return None, str(path)
    text, bad = decode_prefix(data, truncated=read.truncated)
    text = text.strip()
    if bad is not None:
        record_warning(
            "soul_not_utf8",
            f"{path} is not valid UTF-8 (first bad byte at offset {bad}); the bad bytes were "
            "replaced with U+FFFD",
            path=str(path), plugin="identity",
        )
    if read.truncated:
        record_warning(
            "soul_truncated",
            f"{path} is larger than {limit:,} bytes; only the first {limit:,} were used",
            path=str(path), plugin="identity",
        )
        text += "\n\n" + truncation_marker(path, read.size, limit)
    return (text or None), str(path)


@hookimpl(trylast=True)
def hermes_prompt_identity(ctx: PromptContext) -> PromptBlock:
    text, path = read_soul(ctx)
    if text is None:
        return PromptBlock(name="identity", text=DEFAULT_IDENTITY)
    ids = findings(ctx, text, "SOUL.md")
    if ids:
        flagged_soul(ids, path=path)  # the user's own file: loaded, with a warning
    return PromptBlock(name="identity", text=text, source=path)

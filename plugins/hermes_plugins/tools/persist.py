"""Turning a too-large tool result into a file plus a preview block (spec §18.2).

The block the model sees::

    <persisted-output>
    This tool result is too large for the context: 60,000 characters (58.6 KB).
    Full output saved to: /home/me/.hermes/cache/spillover/call_42.txt
    Read it in pages with read_file (offset and limit) or process it with execute_code; the
    file holds all of it, so do not request the same data again.

    Preview (first 1,487 chars):
    ...
    ...
    </persisted-output>

When no writer could store the file, the preview is followed by a notice saying how much was
cut and that the rest could not be saved: data is never dropped without saying so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import attrs

from hermes_core.plugin import bounded, get_logger, record_warning
from hermes_plugins.tools.writers import (
    LocalWriter,
    SpillPrunes,
    default_writer,
    is_local,
    safe_result_filename,
    spill_dir,
)

log = get_logger(__name__)

OPEN_TAG = "<persisted-output>"
CLOSE_TAG = "</persisted-output>"
_PATH_LINE = re.compile(r"^Full output saved to: (.+)$", re.MULTILINE)


def generate_preview(content: str, max_chars: int = 1_500) -> tuple[str, bool]:
    """The first ``max_chars`` characters, cut after a newline when one lies past the middle.

    Returns ``(preview, has_more)``.
    """
    if len(content) <= max_chars:
        return content, False
    cut = content.rfind("\n", 0, max_chars)
    if cut > max_chars // 2:
        return content[: cut + 1], True
    return content[:max_chars], True


def format_size(chars: int, size_bytes: int) -> str:
    kb = size_bytes / 1024
    unit = f"{kb / 1024:.1f} MB" if kb >= 1024 else f"{kb:.1f} KB"
    return f"{chars:,} characters ({unit})"


def persisted_block(*, original: str, path: str, preview: str, has_more: bool) -> str:
    size = format_size(len(original), len(original.encode("utf-8", "surrogatepass")))
    return "\n".join([
        OPEN_TAG,
        f"This tool result is too large for the context: {size}.",
        f"Full output saved to: {path}",
        (
            "Read it in pages with read_file (offset and limit) or process it with "
            "execute_code; the file holds all of it, so do not request the same data again."
        ),
        "",
        f"Preview (first {len(preview):,} chars):",
        preview.rstrip("\n") + ("\n..." if has_more else ""),
        CLOSE_TAG,
    ])


def truncated_block(*, original: str, preview: str, host_copy: str | None) -> str:
    where = (
        f" A copy was kept on the host at {host_copy}, which the tools may not be able to read."
        if host_copy
        else ""
    )
    return (
        preview.rstrip("\n")
        + "\n...\n"
        + f"[Truncated: this tool result was {len(original):,} characters and only the first "
        f"{len(preview):,} are shown; the full output could not be saved where the tools can "
        f"read it.{where}]"
    )


def extract_persisted_path(text: str) -> str | None:
    """The file path named in a persisted-output block, or ``None``."""
    if not isinstance(text, str) or OPEN_TAG not in text:
        return None
    match = _PATH_LINE.search(text)
    return match.group(1).strip() if match else None


def is_persisted(content: Any) -> bool:
    return isinstance(content, str) and content.lstrip().startswith(OPEN_TAG)


def _pageable(content: str) -> tuple[str, str]:
    """(text to preview, text to store): an MCP ``{"result": text, ...}`` envelope is unwrapped
    so the file pages as plain text, its other keys kept in a metadata block at the end."""
    if not content.lstrip().startswith("{"):
        return content, content
    try:
        data = bounded.loads(content)  # a tool's output: depth-checked before parsing
    except ValueError:  # not JSON, or too deep to parse (bounded.TooDeepError): pages as text
        return content, content
    if not isinstance(data, dict) or not isinstance(data.get("result"), str):
        return content, content
    text = data["result"]
    meta = {k: v for k, v in data.items() if k != "result"}
    stored = text if not meta else f"{text}\n\n[metadata]\n{json.dumps(meta, ensure_ascii=False, default=str)}"
    return text, stored


def _writer(environment: Any, home: Any, host: Any) -> Any:
    if host is None:
        return default_writer(environment, home)
    writer = host.tool_result_writer(environment)
    if isinstance(writer, LocalWriter):
        directory = writer.directory
        if home is not None and directory == spill_dir(None):
            # The hook only sees the environment; the call knows its HERMES_HOME.
            directory = spill_dir(home)
        # The host remembers which directories were pruned, not the writer of one call.
        writer = attrs.evolve(writer, directory=directory, prunes=host.state(SpillPrunes))
    return writer


def _write(writer: Any, content: str, name: str) -> str | None:
    try:
        path = writer(content, name)
    except Exception as exc:  # noqa: BLE001 - a failing writer costs the file, not the turn
        log.warning("spill_writer_failed", name=name, error=f"{type(exc).__name__}: {exc}")
        return None
    return path if isinstance(path, str) and path else None


def spill(
    content: str,
    *,
    tool_name: str,
    call_id: str,
    preview_size: int,
    home: Any = None,
    environment: Any = None,
    host: Any = None,
    redact: Callable[[str], str] | None = None,
) -> str:
    """Store ``content`` through the writer and answer the block that replaces it.

    ``redact``: applied to what goes into the file (nothing secret at rest); the preview the
    model sees now is the live result, as it came."""
    preview_text, stored = _pageable(content)
    if redact is not None:
        stored = redact(stored)
    preview, has_more = generate_preview(preview_text, preview_size)
    name = safe_result_filename(call_id, stored)
    writer = _writer(environment, home, host)
    path = _write(writer, stored, name) if writer is not None else None
    if path is not None:
        log.info("tool_result_spilled", tool=tool_name, chars=len(content), path=path)
        return persisted_block(original=content, path=path, preview=preview, has_more=has_more)
    host_copy = None
    if not (isinstance(writer, LocalWriter) or (writer is None and is_local(environment))):
        host_copy = _write(LocalWriter.for_home(home), stored, name)
    record_warning(
        "tool_result_spill_failed",
        f"the {len(content):,}-character result of {tool_name or 'a tool'} could not be saved "
        f"for the tools; the model sees its first {len(preview):,} characters"
        + (f" (a copy is at {host_copy})" if host_copy else ""),
        plugin="spill",
        path=host_copy,
        tool=tool_name,
        chars=len(content),
    )
    return truncated_block(original=content, preview=preview, host_copy=host_copy)

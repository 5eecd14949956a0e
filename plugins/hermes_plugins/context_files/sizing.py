"""How many characters a context source may put in the prompt, and fitting files to that.

The cap follows the model's window: ``context.file_max_chars`` when the user set it, else 6% of
the window (at 4 characters per token) between 20,000 and 500,000 characters, else 20,000.
A loader that finds several files (the AGENTS.md chain, ``.cursor/rules``) shares one cap
among them: small files stay whole and the rest split what is left evenly, so every file keeps
its own head and tail and the report per file stays exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from hermes_core.plugin import (
    Config,
    ConfigSection,
    ContextFile,
    PromptContext,
    field,
    get_logger,
    integer,
    number,
    record_warning,
)
from hermes_plugins.context_files.reading import FileText
from hermes_plugins.context_files.truncate import Cut, splice, truncate_text

log = get_logger(__name__)


@attrs.frozen(kw_only=True)
class ContextFileKeys:
    file_max_chars: int | None = field(
        None, integer(1, optional=True), doc="cap per context file; null = sized to the window"
    )
    file_read_timeout: float = field(5.0, number(0.0, low_open=True), doc="seconds per file read")


CONTEXT_FILES = ConfigSection(name="context", model=ContextFileKeys, doc="How project context files are read.")

DEFAULT_MAX_CHARS = 20_000
MAX_CHARS_CEILING = 500_000
WINDOW_PERCENT = 6
CHARS_PER_TOKEN = 4


def max_chars(config: Config | None, context_length: int | None) -> int:
    """The cap per context source, in characters."""
    configured = config.section(CONTEXT_FILES).file_max_chars if config is not None else None
    if configured:
        return int(configured)
    if not isinstance(context_length, int) or isinstance(context_length, bool) or context_length <= 0:
        return DEFAULT_MAX_CHARS
    # Integer arithmetic: 200_000 * 4 * 0.06 is not exactly 48_000 in floating point.
    dynamic = context_length * CHARS_PER_TOKEN * WINDOW_PERCENT // 100
    return max(DEFAULT_MAX_CHARS, min(dynamic, MAX_CHARS_CEILING))


def max_chars_for(ctx: PromptContext) -> int:
    return max_chars(ctx.config, ctx.context_length)


def read_timeout(ctx: PromptContext) -> float | None:
    return ctx.config.section(CONTEXT_FILES).file_read_timeout if ctx.config is not None else None


def share(sizes: Sequence[int], budget: int) -> list[int]:
    """Split ``budget`` over items of ``sizes``: small ones whole, the rest an even share."""
    out = [0] * len(sizes)
    left = max(budget, 0)
    order = sorted(range(len(sizes)), key=sizes.__getitem__)
    for done, index in enumerate(order):
        fair = left // (len(sizes) - done)
        out[index] = min(sizes[index], fair)
        left -= out[index]
    return out


def fit(
    text: FileText, budget: int, *, label: str, loader: str, max_chars: int
) -> tuple[Cut, bool]:
    """Cut one file to ``budget`` characters; records a warning when it had to be truncated."""
    read_path = str(text.path.absolute())
    if text.complete:
        cut = truncate_text(text.head, budget, label=label, read_path=read_path)
    else:
        cut = splice(text.head, text.tail, text.chars, budget, label=label, read_path=read_path,
                     approximate=True)
    if cut.truncated:
        about = "" if text.complete else "about "
        record_warning(
            "context_file_truncated",
            f"context file {label} has {about}{cut.total_chars:,} characters, more than the "
            f"{budget:,} it may use; kept the first {cut.head_chars:,} and the last "
            f"{cut.tail_chars:,}. Trim the file, set context.file_max_chars, or use a model "
            "with a larger window.",
            plugin=loader,
            path=read_path,
            original_chars=cut.total_chars,
            kept_chars=cut.kept_chars,
            max_chars=budget,
            cap=max_chars,
        )
    return cut, cut.truncated


def fit_files(
    texts: Sequence[FileText], labels: Sequence[str], *, max_chars: int, loader: str,
) -> tuple[ContextFile, ...]:
    """Turn what a loader read into sized ``ContextFile`` records sharing one cap."""
    budgets = share([t.chars for t in texts], max_chars)
    out = []
    for text, label, budget in zip(texts, labels, budgets, strict=True):
        cut, truncated = fit(text, budget, label=label, loader=loader, max_chars=max_chars)
        out.append(
            ContextFile(
                path=text.path, label=label, text=cut.text, loader=loader, chars=cut.total_chars,
                kept_chars=cut.kept_chars, truncated=truncated,
            )
        )
        log.debug("context_file_loaded", loader=loader, path=str(text.path), chars=cut.total_chars,
                  kept_chars=cut.kept_chars)
    return tuple(out)

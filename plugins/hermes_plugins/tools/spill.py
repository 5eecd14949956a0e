"""Built-in plugin ``tool_results``: the tool-result pipeline (spec §17, §18).

One result, through ``hermes_tool_result_process`` (the one hook the whole pipeline runs in):

1. ``read_file`` is pinned: it never spills (the model would read the spill file with
   ``read_file`` and spill again); its page is held to ``tool_output.max_lines`` lines of at
   most ``tool_output.max_line_length`` characters, with a note saying where to read on;
2. every other result over its threshold is written to a file through the writer hook and
   replaced by a ``<persisted-output>`` block (size, path, how to page it, a preview). The
   threshold is 15% of the window (x4 chars, 8,000..100,000), ``tool_budget.mcp_result_size_chars``
   for ``mcp_*`` tools, and at most ``tool_output.max_bytes`` for the terminal.

One turn, through ``hermes_tool_results_turn_budget``: when all results together pass 30% of
the window (16,000..200,000 chars), the largest are spilled first until the turn fits. Inputs
are never mutated: changed messages are new dicts in a new list.

The writer, through ``hermes_tool_result_writer``: local files under
``$HERMES_HOME/cache/spillover/`` for a local session, the sandbox's own disk (content on
standard input) for a remote one. Any plugin can answer that hook first to store elsewhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hermes_core.plugin import (
    ConfigSection,
    Redactor,
    ToolCallContext,
    ToolsContext,
    hookimpl,
    record_warning,
    redact_text,
)
from hermes_plugins._common.archive_settings import ARCHIVE
from hermes_plugins.tools.budget import PINNED_THRESHOLDS, BudgetConfig, budget_for
from hermes_plugins.tools.output_limits import (
    cap_page,
    clip_long_lines,
    config_for,
    limits_from_config,
)
from hermes_plugins.tools.persist import is_persisted, spill
from hermes_plugins.tools.settings import TOOL_BUDGET, TOOL_OUTPUT
from hermes_plugins.tools.writers import default_writer

#: Tools whose output ``tool_output.max_bytes`` caps.
TERMINAL_TOOLS = frozenset({"terminal"})
READ_TOOLS = frozenset({"read_file"})
BUDGET_TOOL_NAME = "__budget_enforcement__"


def _config(ctx: Any) -> Any:
    return config_for(ctx)


def text_size(content: Any) -> int:
    """Characters of text in a result (images and other parts count nothing)."""
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(len(part["text"]) for part in content if _is_text_part(part))
    return 0


#: Text parts of every request shape: OpenAI chat and Anthropic ``text``, Responses
#: ``input_text``/``output_text`` (issue 29: every content shape in every pass).
_TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})


def _is_text_part(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") in _TEXT_PART_TYPES and isinstance(part.get("text"), str)


def process_tool_result(content: Any, ctx: ToolCallContext) -> Any:
    """Output limits, then spilling: the built-in answer of ``hermes_tool_result_process``."""
    config = _config(ctx)
    name = ctx.tool_name or ""
    if name in READ_TOOLS:
        return _limit_page(content, ctx, config)
    budget = budget_for(config, ctx.context_length)
    threshold = budget.resolve_threshold(name)
    if name in TERMINAL_TOOLS:
        threshold = min(threshold, limits_from_config(config).max_bytes)
    if text_size(content) <= threshold:
        return content
    spill_one = _spiller(name, ctx.tool_call_id, budget, ctx)
    if isinstance(content, str):
        return spill_one(content)
    return _spill_parts(content, threshold, spill_one, floor=budget.preview_size)


def _limit_page(content: Any, ctx: ToolCallContext, config: Any) -> Any:
    limits = limits_from_config(config)
    offset = ctx.arguments.get("offset") if isinstance(ctx.arguments, Mapping) else None

    def limit(text: str) -> str:
        # Lines first, so the page's own note about where to read on is never clipped.
        page, _ = clip_long_lines(text, limits.max_line_length)
        return cap_page(page, limits.max_lines, offset)

    if isinstance(content, str):
        return limit(content)
    if isinstance(content, list):
        # A page as a list of parts: each text part held to the same limits, media kept.
        out = [({**part, "text": limit(part["text"])} if _is_text_part(part) else part) for part in content]
        return content if all(a is b or a == b for a, b in zip(out, content)) else out
    return content


def _spiller(name: str, call_id: str, budget: BudgetConfig, ctx: Any) -> Any:
    def spill_one(text: str) -> str:
        return spill(
            text,
            tool_name=name,
            call_id=call_id,
            preview_size=budget.preview_size,
            home=getattr(ctx, "home", None),
            environment=getattr(ctx, "environment", None),
            host=getattr(ctx, "host", None),
            redact=_file_redaction(ctx),
        )

    return spill_one


def _file_redaction(ctx: Any) -> Any:
    """What masks the secrets of a spill file: the session's redactor (placeholders stable for
    the session), or none when ``archive.keep_secrets`` is set (unsafe)."""
    config = getattr(ctx, "config", None)
    if config is not None and config.section(ARCHIVE).keep_secrets is True:
        return None
    redactor = getattr(getattr(ctx, "session", None), "redactor", None)
    return redactor.redact if isinstance(redactor, Redactor) else redact_text


def _spill_parts(parts: Any, limit: float, spill_one: Any, *, floor: int, at_most: int = 0) -> Any:
    """Spill the largest text parts of a list result until its text fits ``limit``.

    Parts of ``floor`` characters or less stay: their block would be as large as they are.
    ``at_most`` > 0 caps how many parts are spilled.
    """
    if not isinstance(parts, list):
        return parts
    out = list(parts)
    total = text_size(out)
    order = sorted(
        (
            i for i, part in enumerate(out)
            if _is_text_part(part) and len(part["text"]) > floor and not is_persisted(part["text"])
        ),
        key=lambda i: -len(out[i]["text"]),
    )
    for done, i in enumerate(order):
        if total <= limit or (at_most and done >= at_most):
            break
        text = out[i]["text"]
        block = spill_one(text)
        out[i] = {**out[i], "text": block}
        total += len(block) - len(text)
    return out


def enforce_turn_budget(results: list[dict[str, Any]], ctx: ToolsContext) -> list[dict[str, Any]] | None:
    """Spill the largest results first until the turn fits; ``None`` when it already fits."""
    config = _config(ctx)
    budget = budget_for(config, ctx.context_length)
    sizes = [text_size(m.get("content")) if isinstance(m, Mapping) else 0 for m in results]
    total = sum(sizes)
    if total <= budget.turn_budget:
        return None
    order = sorted(
        (i for i, m in enumerate(results) if sizes[i] > budget.preview_size and _spillable(m)),
        key=lambda i: -sizes[i],
    )
    out = list(results)
    for i in order:
        if total <= budget.turn_budget:
            break
        message = results[i]
        spill_one = _spiller(BUDGET_TOOL_NAME, str(message.get("tool_call_id") or ""), budget, ctx)
        content = message.get("content")
        if isinstance(content, str):
            new_content: Any = spill_one(content)
        else:
            # Only the largest text part goes: images and the smaller parts stay inline.
            new_content = _spill_parts(
                content, 0, spill_one, floor=budget.preview_size, at_most=1
            )
        out[i] = {**message, "content": new_content}
        total += text_size(new_content) - sizes[i]
    if total > budget.turn_budget:
        record_warning(
            "tool_turn_budget_exceeded",
            f"this turn's tool results still hold {total:,} characters after spilling, over the "
            f"turn budget of {budget.turn_budget:,} (what is left is pinned or already spilled)",
            plugin="spill",
            chars=total,
            budget=budget.turn_budget,
        )
    return out


def _spillable(message: Any) -> bool:
    if not isinstance(message, Mapping):
        return False
    name = message.get("name") or message.get("tool_name") or ""
    if name in PINNED_THRESHOLDS:
        return False
    content = message.get("content")
    return not is_persisted(content)


@hookimpl
def hermes_config_sections() -> list[ConfigSection[Any]]:
    return [TOOL_OUTPUT, TOOL_BUDGET]


@hookimpl(trylast=True)
def hermes_tool_result_process(content: Any, ctx: ToolCallContext) -> Any:
    return process_tool_result(content, ctx)


@hookimpl(trylast=True)
def hermes_tool_results_turn_budget(
    results: list[dict[str, Any]], ctx: ToolsContext
) -> list[dict[str, Any]] | None:
    return enforce_turn_budget(results, ctx)


@hookimpl(trylast=True)
def hermes_tool_result_writer(environment: Any) -> Any:
    return default_writer(environment)

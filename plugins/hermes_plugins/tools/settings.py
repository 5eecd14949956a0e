"""The tool side's config keys: ``tools.search`` (owned by ``tool_search``), ``tool_output``
and ``tool_budget`` (owned by ``spill``).

These sections never raise: a bad value falls back to its default with a warning (the
reference's behaviour for the tool side).
"""

from __future__ import annotations

import attrs

from hermes_core.plugin import ConfigSection, clamped, field, integer, name_list, section, tri_state


@attrs.frozen(kw_only=True)
class ToolSearchSection:
    enabled: str = field("auto", tri_state, lenient=True)
    threshold_pct: float = field(5.0, clamped(0.0, 100.0, float), lenient=True)
    max_search_limit: int = field(25, clamped(1, 50, int), lenient=True)
    search_default_limit: int = field(5, clamped(1, 50, int), lenient=True)
    listing: str = field("auto", tri_state, lenient=True)
    listing_max_tokens: int = field(4_000, clamped(200, 60_000, int), lenient=True)
    defer: tuple[str, ...] | None = field(None, name_list, lenient=True)


@attrs.frozen(kw_only=True)
class ToolsSection:
    search: ToolSearchSection = section(ToolSearchSection)


@attrs.frozen(kw_only=True)
class ToolOutputSection:
    max_bytes: int = field(50_000, integer(1), lenient=True)
    max_lines: int = field(2_000, integer(1), lenient=True)
    max_line_length: int = field(2_000, integer(1), lenient=True)


@attrs.frozen(kw_only=True)
class ToolBudgetSection:
    mcp_result_size_chars: int = field(50_000, integer(1))


TOOLS = ConfigSection(name="tools", model=ToolsSection, doc="Deferred tool disclosure (tool search).")
TOOL_OUTPUT = ConfigSection(name="tool_output", model=ToolOutputSection, doc="Limits of one tool's output.")
TOOL_BUDGET = ConfigSection(name="tool_budget", model=ToolBudgetSection, doc="Per-result size budgets.")

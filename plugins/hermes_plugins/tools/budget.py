"""How large a tool result, and a turn of results, may be before it is spilled (spec §18.1).

Budgets scale with the window: a result may take 15% of it and a turn 30% (window x 4 chars),
capped at the historical 100,000 / 200,000 characters and floored at 8,000 / 16,000. Large
windows therefore behave exactly as before; only small windows are held tighter.
``read_file`` never spills: spilling its result would send the model to read the spill file
with ``read_file``, which would spill again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from hermes_plugins.tools.settings import TOOL_BUDGET

DEFAULT_RESULT_SIZE = 100_000
DEFAULT_TURN_BUDGET = 200_000
DEFAULT_PREVIEW_SIZE = 1_500
DEFAULT_MCP_RESULT_SIZE = 50_000
MIN_RESULT_SIZE = 8_000
MIN_TURN_BUDGET = 16_000
RESULT_SHARE = 0.15
TURN_SHARE = 0.30
CHARS_PER_TOKEN = 4

#: Tools whose results are never spilled, whatever the override or budget.
PINNED_THRESHOLDS: Mapping[str, float] = MappingProxyType({"read_file": math.inf})
MCP_PREFIX = "mcp_"


def _frozen_mapping(value: Any) -> Mapping[str, float]:
    return MappingProxyType(dict(value or {}))


@attrs.frozen(kw_only=True)
class BudgetConfig:
    """Character thresholds for spilling (all in characters of text)."""

    default_result_size: int = DEFAULT_RESULT_SIZE
    turn_budget: int = DEFAULT_TURN_BUDGET
    preview_size: int = DEFAULT_PREVIEW_SIZE
    mcp_result_size: int = DEFAULT_MCP_RESULT_SIZE
    tool_overrides: Mapping[str, float] = attrs.field(
        factory=dict, converter=_frozen_mapping, hash=False
    )

    def resolve_threshold(self, tool_name: str) -> float:
        """Pinned tools never spill; then an override; ``mcp_*`` tools use the MCP size."""
        if tool_name in PINNED_THRESHOLDS:
            return PINNED_THRESHOLDS[tool_name]
        if tool_name in self.tool_overrides:
            return self.tool_overrides[tool_name]
        if tool_name.startswith(MCP_PREFIX):
            return min(self.mcp_result_size, self.default_result_size)
        return self.default_result_size


DEFAULT_BUDGET = BudgetConfig()


def budget_for_context_window(
    context_length: int | None, *, mcp_result_size: int = DEFAULT_MCP_RESULT_SIZE
) -> BudgetConfig:
    """The budget for a window of ``context_length`` tokens (``None``/<= 0: the defaults)."""
    if context_length is None or context_length <= 0:
        if mcp_result_size == DEFAULT_MCP_RESULT_SIZE:
            return DEFAULT_BUDGET
        return attrs.evolve(DEFAULT_BUDGET, mcp_result_size=mcp_result_size)
    window_chars = context_length * CHARS_PER_TOKEN
    return BudgetConfig(
        default_result_size=max(MIN_RESULT_SIZE, min(int(window_chars * RESULT_SHARE), DEFAULT_RESULT_SIZE)),
        turn_budget=max(MIN_TURN_BUDGET, min(int(window_chars * TURN_SHARE), DEFAULT_TURN_BUDGET)),
        preview_size=DEFAULT_PREVIEW_SIZE,
        mcp_result_size=mcp_result_size,
    )


def budget_for(config: Any, context_length: int | None) -> BudgetConfig:
    """The budget for a window, with ``tool_budget.mcp_result_size_chars`` from ``config``."""
    mcp = DEFAULT_MCP_RESULT_SIZE if config is None else config.section(TOOL_BUDGET).mcp_result_size_chars
    return budget_for_context_window(context_length, mcp_result_size=mcp)

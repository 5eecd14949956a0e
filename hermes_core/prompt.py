"""The system prompt's table: which hook fills which block, in which layer, at which position.

This is data a reader can check: the assembler walks ``PROMPT_TABLE`` by (layer, position) and
never depends on plugin registration order. Layers are joined stable -> context -> volatile,
each the ``"\\n\\n"``-join of its non-empty blocks (spec §2.7); the ``system_message`` slot has no
hook - it is the caller's text.
"""

from __future__ import annotations

import attrs

from hermes_core.records import Layer

LAYERS: tuple[Layer, ...] = ("stable", "context", "volatile")


@attrs.frozen(kw_only=True)
class Slot:
    """One row of the table: a hook (or the caller's system message), its layer and position."""

    hook: str | None
    layer: Layer
    position: int
    blocks: tuple[str, ...]


PROMPT_TABLE: tuple[Slot, ...] = (
    Slot(hook="hermes_prompt_identity", layer="stable", position=10, blocks=("identity",)),
    Slot(
        hook="hermes_prompt_general_guidance", layer="stable", position=20,
        blocks=("help", "task_completion", "parallel_tool_calls"),
    ),
    Slot(
        hook="hermes_prompt_tool_guidance", layer="stable", position=30,
        blocks=("tool_guidance", "steer_note"),
    ),
    Slot(
        hook="hermes_prompt_model_guidance", layer="stable", position=40,
        blocks=("tool_use_enforcement", "google_guidance", "execution_guidance"),
    ),
    Slot(hook="hermes_prompt_skills_index", layer="stable", position=50, blocks=("skills_index",)),
    Slot(hook="hermes_prompt_environment", layer="stable", position=60, blocks=("environment",)),
    Slot(hook="hermes_prompt_platform_hint", layer="stable", position=70, blocks=("platform",)),
    Slot(hook=None, layer="context", position=10, blocks=("system_message",)),
    Slot(hook="hermes_prompt_context_files", layer="context", position=20, blocks=("context_files",)),
    Slot(hook="hermes_prompt_memory", layer="volatile", position=10, blocks=("memory", "user_profile")),
    Slot(
        hook="hermes_prompt_external_memory", layer="volatile", position=20,
        blocks=("external_memory",),
    ),
    Slot(hook="hermes_prompt_session_line", layer="volatile", position=30, blocks=("session_line",)),
)

BLOCK_NAMES: tuple[str, ...] = tuple(name for slot in PROMPT_TABLE for name in slot.blocks)


def ordered_slots() -> list[Slot]:
    """The table sorted by layer, then position."""
    return sorted(PROMPT_TABLE, key=lambda s: (LAYERS.index(s.layer), s.position))


def join_parts(parts: list[str]) -> str:
    """The reference's join rule: strip each part, drop empties, join with a blank line."""
    return "\n\n".join(p.strip() for p in parts if p and p.strip())
